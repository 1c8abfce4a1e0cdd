//! The byte formats of a real WBest run: the control messages on its TCP channel
//! and the UDP probe header. Versioned and length-checked, big-endian, unlike WBest 1.0's raw
//! host-order structs; parsing never panics and names what is wrong.
//!
//! Control message: `"WB"` · version (4) · type (u8) · body length (u16) · body. Version 2:
//! `Hello`'s size is the probe's IP packet (version 1: its UDP payload), and the server answers
//! the client's UDP announcement with a second `Ready` (or an `Error`) in both directions.
//! Version 3: `Result` also carries the train's dispersion rate `R` and what went into it.
//! Version 4: the server answers `Hello` with `Session` (a random nonce) instead of
//! the first `Ready`, and every UDP datagram of the run (the client's announcement and each
//! probe) carries that nonce; each side takes only datagrams from the other's address with
//! the nonce ([`ProbeFilter`]).
//!
//! | type | message | body |
//! |---|---|---|
//! | 1 | `Hello` | direction (0 to-server, 1 from-server) · pairs u16 · train u16 · size u16 (IP packet bytes) · [burst u16: pairs per burst, WBest+; absent = 1, never sent as 1] |
//! | 2 | `Ready` | — |
//! | 3 | `PhaseDone` | phase (0 pairs, 1 train) · probes sent u16 |
//! | 4 | `Arrivals` | phase · count u16 · count × (index u16 · receive time u64 ns) |
//! | 5 | `Rate` | the train rate, bit/s u64 |
//! | 6 | `Error` | UTF-8 text, at most 512 bytes |
//! | 7 | `Result` | C_e bit/s u64 · A bit/s u64 · bytes sent u64 · time ns u64 · R bit/s u64 · pairs used u16 · train gaps used u16 · gaps left out as sender-late u16 · train packets lost u16 |
//! | 8 | `Session` | the run's nonce u64 (server → client, the answer to a valid `Hello`) |
//!
//! Probe header (at the start of each UDP probe, padded to the probe size): `"WP"` · phase ·
//! index u16 · session nonce u64 · send time u64 ns. The client's announcement of its UDP
//! address is a probe header with index 65535 (phase 0, send time 0).
//!

use wisp_core::probe::wbest::WbestPhase;

pub use wisp_core::frame::WireError;
use wisp_core::frame::{Framing, u16_at, u64_at};

/// The format's version.
pub const VERSION: u8 = 4;
/// Control header bytes.
pub const HEADER: usize = 6;
/// Probe header bytes.
pub const PROBE_HEADER: usize = 21;
/// The probe index of the client's UDP announcement.
pub const ANNOUNCE_INDEX: u16 = u16::MAX;
/// Most arrival records in one message.
pub const MAX_ARRIVALS: usize = 2000;
/// Most bytes of an error text.
pub const MAX_ERROR: usize = 512;

/// Which way the probes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    FromServer,
}

/// A control message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Hello {
        direction: Direction,
        pairs: u16,
        train: u16,
        size: u16,
        /// Pairs sent back to back per burst (1: WBest; WBest+: 33). Sent only when not 1,
        /// so a WBest Hello keeps its 7-byte body.
        burst: u16,
    },
    Ready,
    PhaseDone {
        phase: WbestPhase,
        sent: u16,
    },
    Arrivals {
        phase: WbestPhase,
        /// (probe index, receive time in ns on the receiver's clock).
        records: Vec<(u16, u64)>,
    },
    Rate {
        bps: u64,
    },
    Error(String),
    Result {
        capacity_bps: u64,
        available_bps: u64,
        bytes_sent: u64,
        time_ns: u64,
        /// `R`, the train's dispersion rate.
        achievable_bps: u64,
        pairs_used: u16,
        gaps_used: u16,
        /// Train gaps left out because the sender sent their second packet late.
        gaps_sender_late: u16,
        train_lost: u16,
    },
    /// The run's session nonce, which every UDP datagram of the run carries.
    Session {
        nonce: u64,
    },
}

fn phase_byte(p: WbestPhase) -> u8 {
    match p {
        WbestPhase::Pairs => 0,
        WbestPhase::Train => 1,
    }
}

fn phase_of(b: u8) -> Result<WbestPhase, WireError> {
    match b {
        0 => Ok(WbestPhase::Pairs),
        1 => Ok(WbestPhase::Train),
        _ => Err(WireError::Value("phase")),
    }
}

/// The control messages' header.
const FRAMING: Framing = Framing {
    magic: *b"WB",
    version: VERSION,
    header: HEADER,
    len_at: 4,
    name: "WBest message",
};

impl Control {
    fn kind(&self) -> u8 {
        match self {
            Control::Hello { .. } => 1,
            Control::Ready => 2,
            Control::PhaseDone { .. } => 3,
            Control::Arrivals { .. } => 4,
            Control::Rate { .. } => 5,
            Control::Error(_) => 6,
            Control::Result { .. } => 7,
            Control::Session { .. } => 8,
        }
    }

    /// The message's bytes. `Arrivals` beyond [`MAX_ARRIVALS`] records and error texts beyond
    /// [`MAX_ERROR`] bytes are cut (at a character boundary) so the result always parses.
    pub fn emit(&self) -> Vec<u8> {
        let mut body = vec![];
        match self {
            Control::Hello {
                direction,
                pairs,
                train,
                size,
                burst,
            } => {
                body.push(match direction {
                    Direction::ToServer => 0,
                    Direction::FromServer => 1,
                });
                body.extend(pairs.to_be_bytes());
                body.extend(train.to_be_bytes());
                body.extend(size.to_be_bytes());
                if *burst != 1 {
                    body.extend(burst.to_be_bytes());
                }
            }
            Control::Ready => {}
            Control::PhaseDone { phase, sent } => {
                body.push(phase_byte(*phase));
                body.extend(sent.to_be_bytes());
            }
            Control::Arrivals { phase, records } => {
                let n = records.len().min(MAX_ARRIVALS);
                body.push(phase_byte(*phase));
                body.extend((n as u16).to_be_bytes());
                for (i, t) in &records[..n] {
                    body.extend(i.to_be_bytes());
                    body.extend(t.to_be_bytes());
                }
            }
            Control::Rate { bps } => body.extend(bps.to_be_bytes()),
            Control::Session { nonce } => body.extend(nonce.to_be_bytes()),
            Control::Result {
                capacity_bps,
                available_bps,
                bytes_sent,
                time_ns,
                achievable_bps,
                pairs_used,
                gaps_used,
                gaps_sender_late,
                train_lost,
            } => {
                for v in [
                    capacity_bps,
                    available_bps,
                    bytes_sent,
                    time_ns,
                    achievable_bps,
                ] {
                    body.extend(v.to_be_bytes());
                }
                for v in [pairs_used, gaps_used, gaps_sender_late, train_lost] {
                    body.extend(v.to_be_bytes());
                }
            }
            Control::Error(text) => {
                let mut end = text.len().min(MAX_ERROR);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                body.extend(&text.as_bytes()[..end]);
            }
        }
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.extend(b"WB");
        out.push(VERSION);
        out.push(self.kind());
        out.extend((body.len() as u16).to_be_bytes());
        out.extend(body);
        out
    }

    /// The body length a header announces (to read the rest of a message from a stream);
    /// checks magic and version.
    pub fn body_len(header: &[u8]) -> Result<usize, WireError> {
        FRAMING.body_len(header)
    }

    /// Parses exactly one message (trailing bytes are an error).
    pub fn parse(b: &[u8]) -> Result<Control, WireError> {
        let frame = FRAMING.split(b)?;
        let (kind, len, body) = (frame.kind, frame.len(), frame.bytes);
        Ok(match kind {
            1 => {
                if len != 9 {
                    frame.exact(7)?;
                }
                let direction = match body[0] {
                    0 => Direction::ToServer,
                    1 => Direction::FromServer,
                    _ => return Err(WireError::Value("direction")),
                };
                let burst = if len == 9 { u16_at(body, 7) } else { 1 };
                if len == 9 && burst == 1 {
                    // A burst of 1 is the 7-byte Hello: one encoding per message.
                    return Err(WireError::Value("burst"));
                }
                Control::Hello {
                    direction,
                    pairs: u16_at(body, 1),
                    train: u16_at(body, 3),
                    size: u16_at(body, 5),
                    burst,
                }
            }
            2 => {
                frame.exact(0)?;
                Control::Ready
            }
            3 => {
                frame.exact(3)?;
                Control::PhaseDone {
                    phase: phase_of(body[0])?,
                    sent: u16_at(body, 1),
                }
            }
            4 => {
                if len < 3 {
                    frame.exact(3)?;
                }
                let n = usize::from(u16_at(body, 1));
                if n > MAX_ARRIVALS {
                    return Err(WireError::Value("count"));
                }
                frame.exact(3 + 10 * n)?;
                let records = (0..n)
                    .map(|k| (u16_at(body, 3 + 10 * k), u64_at(body, 5 + 10 * k)))
                    .collect();
                Control::Arrivals {
                    phase: phase_of(body[0])?,
                    records,
                }
            }
            5 => {
                frame.exact(8)?;
                Control::Rate {
                    bps: u64_at(body, 0),
                }
            }
            6 => {
                frame.at_most(MAX_ERROR)?;
                Control::Error(
                    String::from_utf8(body.to_vec()).map_err(|_| WireError::Value("text"))?,
                )
            }
            7 => {
                frame.exact(48)?;
                Control::Result {
                    capacity_bps: u64_at(body, 0),
                    available_bps: u64_at(body, 8),
                    bytes_sent: u64_at(body, 16),
                    time_ns: u64_at(body, 24),
                    achievable_bps: u64_at(body, 32),
                    pairs_used: u16_at(body, 40),
                    gaps_used: u16_at(body, 42),
                    gaps_sender_late: u16_at(body, 44),
                    train_lost: u16_at(body, 46),
                }
            }
            8 => {
                frame.exact(8)?;
                Control::Session {
                    nonce: u64_at(body, 0),
                }
            }
            k => return Err(WireError::UnknownType(k)),
        })
    }
}

/// The header of a UDP probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeHeader {
    pub phase: WbestPhase,
    pub index: u16,
    /// The run's session nonce ([`Control::Session`]).
    pub nonce: u64,
    /// Sender's clock, ns.
    pub sent_ns: u64,
}

impl ProbeHeader {
    /// Writes the header at the start of `buf` (at least [`PROBE_HEADER`] bytes).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        if buf.len() < PROBE_HEADER {
            return Err(WireError::Short {
                need: PROBE_HEADER,
                have: buf.len(),
            });
        }
        buf[..2].copy_from_slice(b"WP");
        buf[2] = phase_byte(self.phase);
        buf[3..5].copy_from_slice(&self.index.to_be_bytes());
        buf[5..13].copy_from_slice(&self.nonce.to_be_bytes());
        buf[13..21].copy_from_slice(&self.sent_ns.to_be_bytes());
        Ok(())
    }

    /// Reads the header of a probe (padding after it is ignored).
    pub fn parse(b: &[u8]) -> Result<ProbeHeader, WireError> {
        if b.len() < PROBE_HEADER {
            return Err(WireError::Short {
                need: PROBE_HEADER,
                have: b.len(),
            });
        }
        if &b[..2] != b"WP" {
            return Err(WireError::BadMagic("WBest probe"));
        }
        Ok(ProbeHeader {
            phase: phase_of(b[2])?,
            index: u16_at(b, 3),
            nonce: u64_at(b, 5),
            sent_ns: u64_at(b, 13),
        })
    }
}

/// Which UDP datagrams belong to a run: those from the other side's address that carry the
/// run's nonce. Before the client has announced its UDP port only its IP address (the control
/// connection's) is known; the first announcement from that address with the nonce fixes the
/// port. Everything else is counted in [`ProbeFilter::foreign`] and must be ignored: never
/// answered, never sent to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeFilter {
    ip: std::net::IpAddr,
    port: Option<u16>,
    nonce: u64,
    /// Datagrams that were not the run's (another address or port, another nonce, not a probe).
    pub foreign: u64,
}

impl ProbeFilter {
    /// A run with a known peer (the client's side: the server's UDP address).
    pub fn new(peer: std::net::SocketAddr, nonce: u64) -> Self {
        ProbeFilter {
            ip: peer.ip(),
            port: Some(peer.port()),
            nonce,
            foreign: 0,
        }
    }

    /// A run waiting for the announcement of a client at `ip` (the server's side).
    pub fn awaiting(ip: std::net::IpAddr, nonce: u64) -> Self {
        ProbeFilter {
            ip,
            port: None,
            nonce,
            foreign: 0,
        }
    }

    /// The peer's UDP address, once known.
    pub fn peer(&self) -> Option<std::net::SocketAddr> {
        self.port.map(|p| std::net::SocketAddr::new(self.ip, p))
    }

    /// The header of a datagram of the run (an announcement fixes the peer's port); `None`
    /// for anything else, counted as foreign.
    pub fn accept(&mut self, from: std::net::SocketAddr, b: &[u8]) -> Option<ProbeHeader> {
        let ours = from.ip() == self.ip && self.port.is_none_or(|p| p == from.port());
        match ProbeHeader::parse(b) {
            Ok(h) if ours && h.nonce == self.nonce => {
                if self.port.is_none() {
                    if h.index != ANNOUNCE_INDEX {
                        self.foreign += 1;
                        return None;
                    }
                    self.port = Some(from.port());
                }
                Some(h)
            }
            _ => {
                self.foreign += 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fixed_bytes() {
        let m = Control::Hello {
            direction: Direction::FromServer,
            pairs: 30,
            train: 30,
            size: 1500,
            burst: 1,
        };
        let b = [b'W', b'B', 4, 1, 0, 7, 1, 0, 30, 0, 30, 0x05, 0xdc];
        assert_eq!(m.emit(), b);
        assert_eq!(Control::parse(&b), Ok(m));
        // WBest+: the burst follows.
        let m = Control::Hello {
            direction: Direction::FromServer,
            pairs: 165,
            train: 100,
            size: 1500,
            burst: 33,
        };
        let b = [b'W', b'B', 4, 1, 0, 9, 1, 0, 165, 0, 100, 0x05, 0xdc, 0, 33];
        assert_eq!(m.emit(), b);
        assert_eq!(Control::parse(&b), Ok(m));
        // A burst of 1 has one encoding, the 7-byte body (found by the fuzz target).
        assert_eq!(
            Control::parse(&[b'W', b'B', 4, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0xd3, 0, 1]),
            Err(WireError::Value("burst"))
        );
        // Any other body length is an error naming the expected one.
        assert!(matches!(
            Control::parse(&[b'W', b'B', 4, 1, 0, 8, 1, 0, 165, 0, 100, 0x05, 0xdc, 0]),
            Err(WireError::Length { expected: 7, .. })
        ));
        assert_eq!(Control::Ready.emit(), [b'W', b'B', 4, 2, 0, 0]);
        // Version 4's Session: the nonce, 8 bytes.
        let m = Control::Session {
            nonce: 0x0102_0304_0506_0708,
        };
        let b = [b'W', b'B', 4, 8, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(m.emit(), b);
        assert_eq!(Control::parse(&b), Ok(m));
        // A probe: magic, phase, index, nonce, send time.
        let mut p = [0u8; PROBE_HEADER];
        ProbeHeader {
            phase: WbestPhase::Train,
            index: 0x0a0b,
            nonce: 0x0102_0304_0506_0708,
            sent_ns: 9,
        }
        .emit(&mut p)
        .unwrap();
        assert_eq!(
            p,
            [
                b'W', b'P', 1, 0x0a, 0x0b, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 9
            ]
        );
        let r = Control::Arrivals {
            phase: WbestPhase::Train,
            records: vec![(2, 0x0102)],
        };
        assert_eq!(
            r.emit(),
            [
                b'W', b'B', 4, 4, 0, 13, 1, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 1, 2
            ]
        );
        // Version 3's Result: five u64 then four u16, 48 bytes.
        let r = Control::Result {
            capacity_bps: 12_000_000,
            available_bps: 1,
            bytes_sent: 2,
            time_ns: 3,
            achievable_bps: 4,
            pairs_used: 30,
            gaps_used: 28,
            gaps_sender_late: 1,
            train_lost: 0x0102,
        };
        let b = r.emit();
        assert_eq!(&b[..6], [b'W', b'B', 4, 7, 0, 48]);
        assert_eq!(&b[6..14], 12_000_000u64.to_be_bytes());
        assert_eq!(&b[38..46], 4u64.to_be_bytes());
        assert_eq!(&b[46..], [0, 30, 0, 28, 0, 1, 1, 2]);
        assert_eq!(Control::parse(&b), Ok(r));
        // A version-2 Result (32 bytes) is a length error, not a misread.
        let mut v2 = b[..6 + 32].to_vec();
        v2[5] = 32;
        assert!(matches!(
            Control::parse(&v2),
            Err(WireError::Length {
                kind: 7,
                expected: 48,
                got: 32
            })
        ));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            Control::parse(b"WB"),
            Err(WireError::Short { need: 6, have: 2 })
        );
        assert_eq!(
            Control::parse(b"XB\x01\x02\0\0"),
            Err(WireError::BadMagic("WBest message"))
        );
        assert_eq!(
            Control::parse(b"WB\x01\x02\0\0"),
            Err(WireError::Version {
                got: 1,
                supported: 4
            })
        );
        // Version 3 (no session nonce) is refused as another version.
        assert!(matches!(
            Control::parse(b"WB\x03\x02\0\0"),
            Err(WireError::Version { got: 3, .. })
        ));
        assert_eq!(
            Control::parse(b"WB\x04\x09\0\0"),
            Err(WireError::UnknownType(9))
        );
        assert_eq!(
            Control::parse(b"WB\x04\x02\0\x01x"),
            Err(WireError::Length {
                kind: 2,
                expected: 0,
                got: 1
            })
        );
        assert_eq!(
            Control::parse(b"WB\x04\x02\0\0x"),
            Err(WireError::Trailing(1))
        );
        // An Arrivals count that disagrees with the length.
        assert!(matches!(
            Control::parse(b"WB\x04\x04\0\x03\x00\x00\x05"),
            Err(WireError::Length { kind: 4, .. })
        ));
        assert_eq!(
            ProbeHeader::parse(b"WP\x07\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"),
            Err(WireError::Value("phase"))
        );
    }

    fn phase() -> impl Strategy<Value = WbestPhase> {
        prop_oneof![Just(WbestPhase::Pairs), Just(WbestPhase::Train)]
    }

    fn control() -> impl Strategy<Value = Control> {
        prop_oneof![
            (
                any::<bool>(),
                any::<u16>(),
                any::<u16>(),
                any::<u16>(),
                any::<u16>()
            )
                .prop_map(|(d, pairs, train, size, burst)| Control::Hello {
                    direction: if d {
                        Direction::ToServer
                    } else {
                        Direction::FromServer
                    },
                    pairs,
                    train,
                    size,
                    burst
                }),
            Just(Control::Ready),
            (phase(), any::<u16>()).prop_map(|(phase, sent)| Control::PhaseDone { phase, sent }),
            (
                phase(),
                proptest::collection::vec(any::<(u16, u64)>(), 0..100)
            )
                .prop_map(|(phase, records)| Control::Arrivals { phase, records }),
            any::<u64>().prop_map(|bps| Control::Rate { bps }),
            any::<u64>().prop_map(|nonce| Control::Session { nonce }),
            "[a-zé ]{0,100}".prop_map(Control::Error),
            (
                any::<(u64, u64, u64, u64, u64)>(),
                any::<(u16, u16, u16, u16)>()
            )
                .prop_map(|((a, b, c, d, r), (p, g, l, x))| Control::Result {
                    capacity_bps: a,
                    available_bps: b,
                    bytes_sent: c,
                    time_ns: d,
                    achievable_bps: r,
                    pairs_used: p,
                    gaps_used: g,
                    gaps_sender_late: l,
                    train_lost: x,
                }),
        ]
    }

    proptest! {
        #[test]
        fn emit_then_parse_round_trips(m in control()) {
            prop_assert_eq!(Control::parse(&m.emit()), Ok(m));
        }

        #[test]
        fn any_bytes_parse_or_fail_without_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(m) = Control::parse(&b) {
                prop_assert_eq!(m.emit(), b.clone());
            }
            if let Ok(h) = ProbeHeader::parse(&b) {
                let mut out = [0u8; PROBE_HEADER];
                h.emit(&mut out).unwrap();
                prop_assert_eq!(&out[..], &b[..PROBE_HEADER]);
            }
        }

        #[test]
        fn a_valid_header_with_garbage_behind_never_panics(
            kind in 0u8..10, body in proptest::collection::vec(any::<u8>(), 0..40)
        ) {
            let mut b = vec![b'W', b'B', VERSION, kind];
            b.extend((body.len() as u16).to_be_bytes());
            b.extend(&body);
            if let Ok(m) = Control::parse(&b) {
                prop_assert_eq!(m.emit(), b);
            }
        }
    }

    fn probe(index: u16, nonce: u64) -> Vec<u8> {
        let mut b = vec![0u8; 100];
        ProbeHeader {
            phase: WbestPhase::Pairs,
            index,
            nonce,
            sent_ns: 1,
        }
        .emit(&mut b)
        .unwrap();
        b
    }

    /// A stranger's announcement ("WP", index 65535) used to become the server's
    /// probe destination, and forged probes went into a to-server estimate.
    #[test]
    fn only_the_clients_datagrams_with_the_nonce_belong_to_the_run() {
        let client: std::net::SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let other_port: std::net::SocketAddr = "127.0.0.1:4001".parse().unwrap();
        let other_host: std::net::SocketAddr = "127.0.0.2:4000".parse().unwrap();
        let mut f = ProbeFilter::awaiting(client.ip(), 77);
        // A stranger's announcement: another port without the nonce, another host with it.
        assert_eq!(f.accept(other_port, &probe(ANNOUNCE_INDEX, 0)), None);
        assert_eq!(f.accept(other_host, &probe(ANNOUNCE_INDEX, 77)), None);
        // A probe before the announcement does not fix the port.
        assert_eq!(f.accept(client, &probe(3, 77)), None);
        assert_eq!(f.accept(client, b"garbage"), None);
        assert_eq!((f.peer(), f.foreign), (None, 4));
        assert!(f.accept(client, &probe(ANNOUNCE_INDEX, 77)).is_some());
        assert_eq!(f.peer(), Some(client));
        // From then on, only that port with the nonce.
        assert_eq!(f.accept(client, &probe(0, 77)).map(|h| h.index), Some(0));
        assert_eq!(f.accept(other_port, &probe(1, 77)), None);
        assert_eq!(f.accept(client, &probe(1, 78)), None);
        assert_eq!(f.foreign, 6);
        // The client's side knows the server's address from the start.
        let server: std::net::SocketAddr = "127.0.0.1:9878".parse().unwrap();
        let mut c = ProbeFilter::new(server, 5);
        assert!(c.accept(server, &probe(0, 5)).is_some());
        assert_eq!(c.accept(other_port, &probe(0, 5)), None);
        assert_eq!(c.foreign, 1);
    }

    proptest! {
        /// Whatever strangers send, the peer stays unknown until the client's own announcement
        /// and is then the client's.
        #[test]
        fn strangers_never_become_the_peer(
            flood in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..40), 1u16..3000, any::<bool>(), any::<u64>()),
                0..200,
            ),
            nonce in any::<u64>(),
        ) {
            let client: std::net::SocketAddr = "127.0.0.1:4000".parse().unwrap();
            let mut f = ProbeFilter::awaiting(client.ip(), nonce);
            let n = flood.len() as u64;
            for (bytes, port, forged, guess) in flood {
                let b = if forged { probe(ANNOUNCE_INDEX, guess) } else { bytes };
                // Other ports of the client's own host, and another host with the right nonce.
                let from = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                let guessed = guess == nonce && forged;
                if !guessed {
                    prop_assert_eq!(f.accept(from, &b), None);
                }
                prop_assert_eq!(f.accept("10.0.0.1:4000".parse().unwrap(), &probe(ANNOUNCE_INDEX, nonce)), None);
                if !guessed {
                    prop_assert_eq!(f.peer(), None);
                }
            }
            if f.peer().is_none() {
                prop_assert_eq!(f.foreign, 2 * n);
                prop_assert!(f.accept(client, &probe(ANNOUNCE_INDEX, nonce)).is_some());
                prop_assert_eq!(f.peer(), Some(client));
            }
        }
    }
}
