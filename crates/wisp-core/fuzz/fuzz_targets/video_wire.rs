//! Alfalfa's wire formats on arbitrary bytes: a diff (header and model payload) applied to a
//! decoder, a receiver's report, packets of diffs reassembled by the state-sync receiver, and
//! packet payloads (`Piece`s) handed to `alfalfa`'s receiving half as the real path does: an
//! error or a result, never a panic; a refused diff leaves the decoder as it was; a payload that
//! is not a piece is counted.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_core::controller::Receiver;
use wisp_core::packet::{Content, DataHeader};
use wisp_core::scheme::SchemeContext;
use wisp_core::scheme::alfalfa::{AlfalfaConfig, ControlFields, Piece};
use wisp_core::scheme::registry::Scheme;
use wisp_core::tables::Tables;
use wisp_core::video::model::ModelDecoder;
use wisp_core::video::sync::{SlotReport, SyncReceiver};
use wisp_core::video::{StateDecoder, StateId};
use wisp_core::wire::Message;

fuzz_target!(|data: &[u8]| {
    let mut dec = StateDecoder::new(ModelDecoder);
    let before = (dec.slots(), dec.newest());
    if dec.apply(data).is_err() {
        assert_eq!((dec.slots(), dec.newest()), before);
    }
    let _ = SlotReport::parse(data);
    // Packets: 8-byte headers (state, index, count) each followed by up to 32 bytes.
    let mut rx = SyncReceiver::new(ModelDecoder);
    let mut rest = data;
    while rest.len() >= 8 {
        let state = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let index = u16::from_be_bytes([rest[4], rest[5]]);
        let count = u16::from_be_bytes([rest[6], rest[7]]) % 8;
        let n = rest.len().min(8 + usize::from(rest[7] % 33));
        let _ = rx.on_packet(StateId(state % 16), index % 8, count, &rest[8..n]);
        rest = &rest[n..];
    }
    let _ = rx.report();
    // Payloads: a 1-byte length then that many bytes, each one packet's payload.
    if let Ok(p) = Piece::parse(data) {
        assert!(p.bytes.len() + Piece::HEADER <= data.len());
    }
    // Sprout's forecast table is made once and shared by every input's receiver.
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    let ctx = SchemeContext {
        tables: TABLES.get_or_init(Tables::new).clone(),
        ..SchemeContext::new()
    };
    let Ok(h) = AlfalfaConfig::default().build(ctx) else {
        return;
    };
    let mut rx = h.receiver;
    let (mut rest, mut seq, mut bad) = (data, 0u64, 0u64);
    while let Some((&n, tail)) = rest.split_first() {
        let n = usize::from(n).min(tail.len());
        let payload = &tail[..n];
        bad += u64::from(Piece::parse(payload).is_err());
        let header = DataHeader {
            seq,
            content: Content::Video { frame: 0, last: false, key: false },
            ..Default::default()
        };
        rx.on_payload(seq, payload);
        Receiver::on_packet_received(
            &mut *rx,
            wisp_core::Instant::from_millis(seq),
            &header,
            &ControlFields::default(),
        );
        seq += 1;
        rest = &tail[n..];
    }
    assert_eq!(rx.log().bad_pieces(), bad);
});
