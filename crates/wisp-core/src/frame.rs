//! The framing wisp's own tool protocols share (`wisp wbest`'s control messages in `wisp-net`,
//! `wisp saturate`'s packets in [`crate::saturator::wire`]): two magic bytes · a version byte · a message type byte · fields
//! of the protocol's own · a big-endian u16 body length · the body. [`Framing`] checks a header and
//! cuts out exactly one body; [`Body`] checks the body's length against what its type needs. Every
//! check names what is wrong ([`WireError`]); nothing here panics on any input.

/// Why bytes are not a message of a wisp tool protocol.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("truncated: {need} bytes needed, {have} present")]
    Short { need: usize, have: usize },
    #[error("bad magic (not a {0})")]
    BadMagic(&'static str),
    #[error("unsupported version {got} (this is version {supported})")]
    Version { got: u8, supported: u8 },
    #[error("unknown message type {0}")]
    UnknownType(u8),
    #[error("message type {kind}: body of {got} bytes, {expected} expected")]
    Length {
        kind: u8,
        expected: usize,
        got: usize,
    },
    #[error("bad value for `{0}`")]
    Value(&'static str),
    #[error("{0} trailing bytes after the message")]
    Trailing(usize),
    #[error("message of {0} bytes is larger than a UDP datagram")]
    TooLarge(usize),
}

/// One protocol's header layout.
#[derive(Clone, Copy, Debug)]
pub struct Framing {
    /// The two bytes every message starts with.
    pub magic: [u8; 2],
    /// The version this build speaks (byte 2).
    pub version: u8,
    /// The header's length in bytes (the body follows it).
    pub header: usize,
    /// Where the u16 body length sits in the header.
    pub len_at: usize,
    /// What a message is called in [`WireError::BadMagic`] ("WBest message").
    pub name: &'static str,
}

/// A message's type and body, cut out by [`Framing::split`].
#[derive(Clone, Copy, Debug)]
pub struct Body<'a> {
    /// The message type (byte 3).
    pub kind: u8,
    /// The body, exactly as long as the header announced.
    pub bytes: &'a [u8],
}

impl Framing {
    /// The body length a header announces (to read the rest of a message from a stream), after
    /// checking the header's length, magic and version.
    pub fn body_len(&self, header: &[u8]) -> Result<usize, WireError> {
        if header.len() < self.header {
            return Err(WireError::Short {
                need: self.header,
                have: header.len(),
            });
        }
        if header[..2] != self.magic {
            return Err(WireError::BadMagic(self.name));
        }
        if header[2] != self.version {
            return Err(WireError::Version {
                got: header[2],
                supported: self.version,
            });
        }
        Ok(usize::from(u16_at(header, self.len_at)))
    }

    /// Exactly one message: the header checked, the body as long as announced, no bytes after it.
    pub fn split<'a>(&self, b: &'a [u8]) -> Result<Body<'a>, WireError> {
        let len = self.body_len(b)?;
        let end = self.header + len;
        if b.len() < end {
            return Err(WireError::Short {
                need: end,
                have: b.len(),
            });
        }
        if b.len() > end {
            return Err(WireError::Trailing(b.len() - end));
        }
        Ok(Body {
            kind: b[3],
            bytes: &b[self.header..],
        })
    }
}

impl Body<'_> {
    /// The body's length.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The body is exactly `expected` bytes long.
    pub fn exact(&self, expected: usize) -> Result<(), WireError> {
        if self.len() == expected {
            Ok(())
        } else {
            Err(self.length_error(expected))
        }
    }

    /// The body is at least `expected` bytes long.
    pub fn at_least(&self, expected: usize) -> Result<(), WireError> {
        if self.len() >= expected {
            Ok(())
        } else {
            Err(self.length_error(expected))
        }
    }

    /// The body is at most `limit` bytes long.
    pub fn at_most(&self, limit: usize) -> Result<(), WireError> {
        if self.len() <= limit {
            Ok(())
        } else {
            Err(self.length_error(limit))
        }
    }

    fn length_error(&self, expected: usize) -> WireError {
        WireError::Length {
            kind: self.kind,
            expected,
            got: self.len(),
        }
    }
}

/// The big-endian u16 at `i` (the caller has checked the length).
pub fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// The big-endian u32 at `i` (the caller has checked the length).
pub fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// The big-endian u64 at `i` (the caller has checked the length).
pub fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_be_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Framing = Framing {
        magic: *b"XY",
        version: 3,
        header: 6,
        len_at: 4,
        name: "test message",
    };

    #[test]
    fn split_checks_every_header_field() {
        assert_eq!(
            F.split(b"XY\x03\x01\0\x02ab").map(|b| (b.kind, b.bytes)),
            Ok((1, &b"ab"[..]))
        );
        assert_eq!(
            F.split(b"XY\x03").unwrap_err(),
            WireError::Short { need: 6, have: 3 }
        );
        assert_eq!(
            F.split(b"XZ\x03\x01\0\0").unwrap_err(),
            WireError::BadMagic("test message")
        );
        assert_eq!(
            F.split(b"XY\x04\x01\0\0").unwrap_err(),
            WireError::Version {
                got: 4,
                supported: 3
            }
        );
        assert_eq!(
            F.split(b"XY\x03\x01\0\x03ab").unwrap_err(),
            WireError::Short { need: 9, have: 8 }
        );
        assert_eq!(
            F.split(b"XY\x03\x01\0\x01ab").unwrap_err(),
            WireError::Trailing(1)
        );
    }

    #[test]
    fn body_lengths() {
        let b = F.split(b"XY\x03\x07\0\x02ab").unwrap();
        assert!(b.exact(2).is_ok() && b.at_least(1).is_ok() && b.at_most(2).is_ok());
        assert_eq!(
            b.exact(3).unwrap_err(),
            WireError::Length {
                kind: 7,
                expected: 3,
                got: 2
            }
        );
        assert!(b.at_least(3).is_err() && b.at_most(1).is_err());
    }
}
