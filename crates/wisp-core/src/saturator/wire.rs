//! The packet format of `wisp saturate` (the Saturator, Sprout paper §5.1.1). Versioned and
//! length-checked, big-endian; parsing never panics and names what is wrong, and a packet that
//! parses re-encodes to the same bytes.
//!
//! Every packet: `"WS"` · version (1) · type (u8) · session (u32) · body length (u16) · body.
//!
//! | type | message | body |
//! |---|---|---|
//! | 1 | `Hello` | path (0 data, 1 feedback) · directions (1 up, 2 down, 3 both) · packet bytes u16 · client time u64 ns · boot id hash u64 |
//! | 2 | `HelloAck` | path · echoed client time u64 · server time u64 ns · boot id hash u64 |
//! | 3 | `Data` | direction (0 up, 1 down) · sequence number u64 · send time u64 ns · zero padding to the packet size |
//! | 4 | `Ack` | direction · packets received u64 · highest sequence number u64 · its send time u64 (echoed) · held u32 µs |
//! | 5 | `Stop` | — (the client: stop sending the downlink) |
//! | 6 | `StopAck` | — |
//! | 7 | `Fetch` | chunk index u32 · epoch u64 · from u64 · to u64 (ns, server clock) |
//! | 8 | `Report` | chunk index u32 · chunks u32 · packets u64 · n u16 · n × (ms since the epoch u32 · packets u16) |
//! | 9 | `Bye` | — |
//! | 10 | `Error` | UTF-8 text, at most 512 bytes |
//! | 11 | `Start` | — (the client: start sending the downlink) |
//!
//! "Up" is client → server, "down" server → client. The boot id hash tells the two ends whether
//! they share one monotonic clock (one host, e.g. through `wisp link`).

pub use crate::frame::WireError;
use crate::frame::{Framing, u16_at, u32_at, u64_at};

/// The format's version.
pub const VERSION: u8 = 1;
/// Header bytes.
pub const HEADER: usize = 10;
/// Bytes of a `Data` body before its padding.
pub const DATA_BODY: usize = 17;
/// Most `(ms, packets)` entries in one `Report`.
pub const MAX_REPORT: usize = 200;
/// Most bytes of an error text.
pub const MAX_ERROR: usize = 512;
/// The largest packet (a UDP payload).
pub const MAX_PACKET: usize = 65507;

/// The smallest UDP payload of a session: a data packet's header and body.
pub const MIN_PACKET_BYTES: usize = HEADER + DATA_BODY;

/// Checks a session's packet size (a UDP payload).
pub fn check_packet_bytes(n: usize) -> Result<(), String> {
    if !(MIN_PACKET_BYTES..=MAX_PACKET).contains(&n) {
        return Err(format!(
            "must be {MIN_PACKET_BYTES} to {MAX_PACKET} bytes, not {n}"
        ));
    }
    Ok(())
}

/// The zero bytes that make a `Data` packet `packet_bytes` long (a size [`check_packet_bytes`]
/// accepts).
pub fn padding(packet_bytes: usize) -> usize {
    packet_bytes - HEADER - DATA_BODY
}

/// Which way data goes: up is client → server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Up,
    Down,
}

/// Which path a handshake went over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Data,
    Feedback,
}

/// A message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    Hello {
        path: Path,
        up: bool,
        down: bool,
        packet_bytes: u16,
        client_ns: u64,
        boot: u64,
    },
    HelloAck {
        path: Path,
        echo_ns: u64,
        server_ns: u64,
        boot: u64,
    },
    Data {
        dir: Dir,
        seq: u64,
        sent_ns: u64,
        /// Zero bytes after the body's fields, to make the packet MTU-sized.
        padding: usize,
    },
    Ack {
        dir: Dir,
        received: u64,
        highest_seq: u64,
        echo_ns: u64,
        held_us: u32,
    },
    Stop,
    StopAck,
    Fetch {
        index: u32,
        epoch_ns: u64,
        from_ns: u64,
        to_ns: u64,
    },
    Report {
        index: u32,
        chunks: u32,
        packets: u64,
        entries: Vec<(u32, u16)>,
    },
    Bye,
    Error(String),
    Start,
}

/// A message with its session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub session: u32,
    pub message: Message,
}

/// The packets' header.
const FRAMING: Framing = Framing {
    magic: *b"WS",
    version: VERSION,
    header: HEADER,
    len_at: 8,
    name: "saturator packet",
};

fn dir_byte(d: Dir) -> u8 {
    match d {
        Dir::Up => 0,
        Dir::Down => 1,
    }
}

fn dir_of(b: u8) -> Result<Dir, WireError> {
    match b {
        0 => Ok(Dir::Up),
        1 => Ok(Dir::Down),
        _ => Err(WireError::Value("direction")),
    }
}

fn path_byte(p: Path) -> u8 {
    match p {
        Path::Data => 0,
        Path::Feedback => 1,
    }
}

fn path_of(b: u8) -> Result<Path, WireError> {
    match b {
        0 => Ok(Path::Data),
        1 => Ok(Path::Feedback),
        _ => Err(WireError::Value("path")),
    }
}

impl Message {
    fn kind(&self) -> u8 {
        match self {
            Message::Hello { .. } => 1,
            Message::HelloAck { .. } => 2,
            Message::Data { .. } => 3,
            Message::Ack { .. } => 4,
            Message::Stop => 5,
            Message::StopAck => 6,
            Message::Fetch { .. } => 7,
            Message::Report { .. } => 8,
            Message::Bye => 9,
            Message::Error(_) => 10,
            Message::Start => 11,
        }
    }
}

impl Packet {
    /// The packet's bytes, appended to `out` (cleared first). A `Report` beyond
    /// [`MAX_REPORT`] entries and an error text beyond [`MAX_ERROR`] bytes are cut (at a
    /// character boundary) so the result always parses; a `Data` packet whose padding would pass
    /// [`MAX_PACKET`] is an error.
    pub fn emit_into(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        out.clear();
        out.extend(b"WS");
        out.push(VERSION);
        out.push(self.message.kind());
        out.extend(self.session.to_be_bytes());
        out.extend([0, 0]);
        self.message.emit_body(out)?;
        let body = out.len() - HEADER;
        // A Data body can pass 65535 bytes only through padding, refused above.
        let body = u16::try_from(body).map_err(|_| WireError::TooLarge(out.len()))?;
        out[8..10].copy_from_slice(&body.to_be_bytes());
        Ok(())
    }

    /// The packet's bytes.
    pub fn emit(&self) -> Result<Vec<u8>, WireError> {
        let mut v = Vec::new();
        self.emit_into(&mut v)?;
        Ok(v)
    }

    /// Parses exactly one packet (trailing bytes are an error).
    pub fn parse(b: &[u8]) -> Result<Packet, WireError> {
        if b.len() > MAX_PACKET {
            return Err(WireError::TooLarge(b.len()));
        }
        let frame = FRAMING.split(b)?;
        let (kind, len, body) = (frame.kind, frame.len(), frame.bytes);
        let session = u32_at(b, 4);
        let message = match kind {
            1 => {
                frame.exact(20)?;
                let dirs = body[1];
                if dirs == 0 || dirs > 3 {
                    return Err(WireError::Value("directions"));
                }
                Message::Hello {
                    path: path_of(body[0])?,
                    up: dirs & 1 != 0,
                    down: dirs & 2 != 0,
                    packet_bytes: u16_at(body, 2),
                    client_ns: u64_at(body, 4),
                    boot: u64_at(body, 12),
                }
            }
            2 => {
                frame.exact(25)?;
                Message::HelloAck {
                    path: path_of(body[0])?,
                    echo_ns: u64_at(body, 1),
                    server_ns: u64_at(body, 9),
                    boot: u64_at(body, 17),
                }
            }
            3 => {
                frame.at_least(DATA_BODY)?;
                if body[DATA_BODY..].iter().any(|&x| x != 0) {
                    return Err(WireError::Value("padding"));
                }
                Message::Data {
                    dir: dir_of(body[0])?,
                    seq: u64_at(body, 1),
                    sent_ns: u64_at(body, 9),
                    padding: len - DATA_BODY,
                }
            }
            4 => {
                frame.exact(29)?;
                Message::Ack {
                    dir: dir_of(body[0])?,
                    received: u64_at(body, 1),
                    highest_seq: u64_at(body, 9),
                    echo_ns: u64_at(body, 17),
                    held_us: u32_at(body, 25),
                }
            }
            5 | 6 | 9 | 11 => {
                frame.exact(0)?;
                match kind {
                    5 => Message::Stop,
                    6 => Message::StopAck,
                    9 => Message::Bye,
                    _ => Message::Start,
                }
            }
            7 => {
                frame.exact(28)?;
                Message::Fetch {
                    index: u32_at(body, 0),
                    epoch_ns: u64_at(body, 4),
                    from_ns: u64_at(body, 12),
                    to_ns: u64_at(body, 20),
                }
            }
            8 => {
                frame.at_least(18)?;
                let n = usize::from(u16_at(body, 16));
                if n > MAX_REPORT {
                    return Err(WireError::Value("entries"));
                }
                frame.exact(18 + 6 * n)?;
                let entries = (0..n)
                    .map(|k| (u32_at(body, 18 + 6 * k), u16_at(body, 22 + 6 * k)))
                    .collect();
                Message::Report {
                    index: u32_at(body, 0),
                    chunks: u32_at(body, 4),
                    packets: u64_at(body, 8),
                    entries,
                }
            }
            10 => {
                frame.at_most(MAX_ERROR)?;
                Message::Error(
                    String::from_utf8(body.to_vec()).map_err(|_| WireError::Value("text"))?,
                )
            }
            k => return Err(WireError::UnknownType(k)),
        };
        Ok(Packet { session, message })
    }
}

/// The `(ms, packets)` runs of a recording cut into `Report` chunks of at most [`MAX_REPORT`]
/// entries (a run of more than 65535 packets in one ms becomes several entries); at least one
/// chunk, possibly empty.
pub fn report_chunks(counts: &[(u64, u32)]) -> Vec<Vec<(u32, u16)>> {
    let mut entries = vec![];
    for &(ms, n) in counts {
        let ms = u32::try_from(ms).unwrap_or(u32::MAX);
        let mut left = n;
        while left > 0 {
            let k = left.min(u32::from(u16::MAX));
            entries.push((ms, k as u16));
            left -= k;
        }
    }
    let mut chunks: Vec<Vec<(u32, u16)>> = entries.chunks(MAX_REPORT).map(<[_]>::to_vec).collect();
    if chunks.is_empty() {
        chunks.push(vec![]);
    }
    chunks
}

impl Message {
    /// Appends this message's body (after the header) to `out`.
    fn emit_body(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        match self {
            Message::Hello {
                path,
                up,
                down,
                packet_bytes,
                client_ns,
                boot,
            } => {
                out.push(path_byte(*path));
                out.push(u8::from(*up) | (u8::from(*down) << 1));
                out.extend(packet_bytes.to_be_bytes());
                out.extend(client_ns.to_be_bytes());
                out.extend(boot.to_be_bytes());
            }
            Message::HelloAck {
                path,
                echo_ns,
                server_ns,
                boot,
            } => {
                out.push(path_byte(*path));
                for v in [echo_ns, server_ns, boot] {
                    out.extend(v.to_be_bytes());
                }
            }
            Message::Data {
                dir,
                seq,
                sent_ns,
                padding,
            } => {
                let total = HEADER + DATA_BODY + padding;
                if total > MAX_PACKET {
                    return Err(WireError::TooLarge(total));
                }
                out.push(dir_byte(*dir));
                out.extend(seq.to_be_bytes());
                out.extend(sent_ns.to_be_bytes());
                out.resize(total, 0);
            }
            Message::Ack {
                dir,
                received,
                highest_seq,
                echo_ns,
                held_us,
            } => {
                out.push(dir_byte(*dir));
                for v in [received, highest_seq, echo_ns] {
                    out.extend(v.to_be_bytes());
                }
                out.extend(held_us.to_be_bytes());
            }
            Message::Stop | Message::StopAck | Message::Bye | Message::Start => {}
            Message::Fetch {
                index,
                epoch_ns,
                from_ns,
                to_ns,
            } => {
                out.extend(index.to_be_bytes());
                for v in [epoch_ns, from_ns, to_ns] {
                    out.extend(v.to_be_bytes());
                }
            }
            Message::Report {
                index,
                chunks,
                packets,
                entries,
            } => {
                let n = entries.len().min(MAX_REPORT);
                out.extend(index.to_be_bytes());
                out.extend(chunks.to_be_bytes());
                out.extend(packets.to_be_bytes());
                out.extend((n as u16).to_be_bytes());
                for (ms, k) in &entries[..n] {
                    out.extend(ms.to_be_bytes());
                    out.extend(k.to_be_bytes());
                }
            }
            Message::Error(text) => {
                let mut end = text.len().min(MAX_ERROR);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                out.extend(&text.as_bytes()[..end]);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Packet> {
        let m = |message| Packet {
            session: 0xdead_beef,
            message,
        };
        vec![
            m(Message::Hello {
                path: Path::Feedback,
                up: true,
                down: false,
                packet_bytes: 1472,
                client_ns: 5,
                boot: 9,
            }),
            m(Message::HelloAck {
                path: Path::Data,
                echo_ns: 5,
                server_ns: 6,
                boot: 9,
            }),
            m(Message::Data {
                dir: Dir::Down,
                seq: 42,
                sent_ns: 7,
                padding: 1445,
            }),
            m(Message::Ack {
                dir: Dir::Up,
                received: 3,
                highest_seq: 4,
                echo_ns: 8,
                held_us: 120,
            }),
            m(Message::Stop),
            m(Message::StopAck),
            m(Message::Fetch {
                index: 2,
                epoch_ns: 1,
                from_ns: 2,
                to_ns: 3,
            }),
            m(Message::Report {
                index: 1,
                chunks: 2,
                packets: 9,
                entries: vec![(0, 2), (7, 1)],
            }),
            m(Message::Bye),
            m(Message::Error("no session".into())),
            m(Message::Start),
        ]
    }

    #[test]
    fn every_message_round_trips() {
        for p in all() {
            let b = p.emit().unwrap();
            assert_eq!(Packet::parse(&b).unwrap(), p, "{p:?}");
        }
        let data = Packet {
            session: 1,
            message: Message::Data {
                dir: Dir::Up,
                seq: 0,
                sent_ns: 0,
                padding: 1472 - HEADER - DATA_BODY,
            },
        };
        assert_eq!(data.emit().unwrap().len(), 1472);
    }

    #[test]
    fn malformed_packets_are_errors_not_panics() {
        let good = all()[0].emit().unwrap();
        assert!(matches!(
            Packet::parse(&good[..5]),
            Err(WireError::Short { .. })
        ));
        assert!(matches!(
            Packet::parse(&good[..good.len() - 1]),
            Err(WireError::Short { .. })
        ));
        let mut long = good.clone();
        long.push(0);
        assert_eq!(Packet::parse(&long), Err(WireError::Trailing(1)));
        let mut b = good.clone();
        b[0] = b'X';
        assert_eq!(
            Packet::parse(&b),
            Err(WireError::BadMagic("saturator packet"))
        );
        let mut b = good.clone();
        b[2] = 2;
        assert_eq!(
            Packet::parse(&b),
            Err(WireError::Version {
                got: 2,
                supported: 1
            })
        );
        let mut b = good.clone();
        b[3] = 77;
        assert_eq!(Packet::parse(&b), Err(WireError::UnknownType(77)));
        let mut b = good.clone();
        b[HEADER + 1] = 0;
        assert_eq!(Packet::parse(&b), Err(WireError::Value("directions")));
        // Nonzero padding, a bad direction.
        let mut d = all()[2].emit().unwrap();
        *d.last_mut().unwrap() = 1;
        assert_eq!(Packet::parse(&d), Err(WireError::Value("padding")));
        let mut d = all()[2].emit().unwrap();
        d[HEADER] = 5;
        assert_eq!(Packet::parse(&d), Err(WireError::Value("direction")));
        // A report announcing more entries than it has.
        let mut r = all()[7].emit().unwrap();
        r[HEADER + 17] = 3;
        assert!(matches!(
            Packet::parse(&r),
            Err(WireError::Length { kind: 8, .. })
        ));
        assert_eq!(
            Packet::parse(&vec![0u8; MAX_PACKET + 1]),
            Err(WireError::TooLarge(MAX_PACKET + 1))
        );
        assert!(
            Packet {
                session: 0,
                message: Message::Data {
                    dir: Dir::Up,
                    seq: 0,
                    sent_ns: 0,
                    padding: 70_000
                }
            }
            .emit()
            .is_err()
        );
    }

    #[test]
    fn reports_cut_into_chunks() {
        assert_eq!(report_chunks(&[]), vec![Vec::<(u32, u16)>::new()]);
        let c = report_chunks(&[(3, 70_000)]);
        assert_eq!(c, vec![vec![(3, 65535), (3, 4465)]]);
        let many: Vec<(u64, u32)> = (0..450).map(|m| (m, 1)).collect();
        let c = report_chunks(&many);
        assert_eq!(
            c.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![200, 200, 50]
        );
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_bytes_parse_or_fail_without_panic(
                b in proptest::collection::vec(any::<u8>(), 0..128)
            ) {
                if let Ok(p) = Packet::parse(&b) {
                    prop_assert_eq!(p.emit().unwrap(), b.clone());
                }
            }

            /// A valid header (any type, the body length right) with any body behind it: an
            /// error or a packet that re-encodes to the same bytes, never a panic.
            #[test]
            fn a_valid_header_with_garbage_behind_never_panics(
                kind in 0u8..13,
                session in any::<u32>(),
                body in proptest::collection::vec(any::<u8>(), 0..80),
            ) {
                let mut b = vec![b'W', b'S', VERSION, kind];
                b.extend(session.to_be_bytes());
                b.extend((body.len() as u16).to_be_bytes());
                b.extend(&body);
                if let Ok(p) = Packet::parse(&b) {
                    prop_assert_eq!(p.emit().unwrap(), b);
                }
            }

            /// Every single-byte corruption of a valid packet parses to something that
            /// re-encodes to the corrupt bytes, or is refused.
            #[test]
            fn corrupt_packets_are_refused_or_consistent(
                which in 0usize..11, at in any::<prop::sample::Index>(), v in any::<u8>()
            ) {
                let mut b = super::all()[which].emit().unwrap();
                let i = at.index(b.len());
                b[i] = v;
                if let Ok(p) = Packet::parse(&b) {
                    prop_assert_eq!(p.emit().unwrap(), b);
                }
            }
        }
    }
}
