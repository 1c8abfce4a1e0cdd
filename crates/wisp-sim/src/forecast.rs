//! What Sprout believes about a link: its receiver fed by a saturated link (`wisp forecast`).
//!
//! Every delivery opportunity of the trace delivers one MTU-sized packet to a Sprout receiver,
//! as if the sender kept the queue full forever (each packet promises no gap: time-to-next 0).
//! The receiver's record of every tick — the count, the received-or-lost total and the
//! forecast — comes back in order.

use std::sync::Arc;
use wisp_core::controller::Receiver;
use wisp_core::packet::{Content, DataHeader, SchemeFields};
use wisp_core::scheme::sprout::wire::SproutFields;
use wisp_core::scheme::sprout::{SproutConfig, SproutReceiver, TickRecord};
use wisp_core::tables::Tables;
use wisp_core::{DataSize, Duration, Instant};

use crate::trace::Trace;

/// Runs a Sprout receiver (`config`, packets of `mtu` bytes) over `duration` of `trace`
/// (repeating it as the simulator does) with the link saturated, and returns every tick.
pub fn saturated(
    trace: &Arc<Trace>,
    duration: Duration,
    config: &SproutConfig,
    mtu: DataSize,
) -> Vec<TickRecord> {
    let end = Instant::ZERO + duration;
    let mut rx = SproutReceiver::new(config, mtu, &Tables::new());
    let mut ticks = Vec::with_capacity((duration.as_millis() / 20) as usize + 1);
    let record_until = |rx: &mut SproutReceiver, t: Instant, ticks: &mut Vec<TickRecord>| {
        while let Some(at) = rx.poll_timeout().filter(|&at| at <= t) {
            rx.on_timeout(at);
            if let Some(r) = rx.last_tick() {
                ticks.push(*r);
            }
        }
    };
    let mut cursor = trace.cursor_at(Instant::ZERO);
    let (mut seq, mut byte_seq) = (0u64, 0u64);
    loop {
        let (at, n) = cursor.peek();
        if at >= end {
            break;
        }
        record_until(&mut rx, at, &mut ticks);
        for _ in 0..n {
            let h = DataHeader {
                seq,
                byte_seq,
                send_time: at,
                size: mtu,
                content: Content::Bulk,
                fields: SchemeFields::EMPTY,
            };
            rx.on_packet_received(at, &h, &SproutFields::SATURATED);
            seq += 1;
            byte_seq += mtu.bytes();
        }
        cursor.advance();
    }
    // Ticks that end within the run (a tick ending exactly at the end is left out, as the
    // simulator runs events before the end only).
    if end > Instant::ZERO {
        record_until(&mut rx, end - Duration::from_nanos(1), &mut ticks);
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceUnit;
    use wisp_core::scheme::sprout::Observation;

    fn trace(text: &str) -> Arc<Trace> {
        Arc::new(Trace::parse(text, "t", TraceUnit::Millis).unwrap())
    }

    #[test]
    fn a_constant_link_is_forecast_below_its_rate_and_an_outage_at_zero() {
        // 500 packets/s for 4 s (one packet every 2 ms), then silence until 6 s.
        let mut text: String = (0..2000).map(|i| format!("{}\n", i * 2)).collect();
        text.push_str("6000\n");
        let ticks = saturated(
            &trace(&text),
            Duration::from_secs(6),
            &SproutConfig::default(),
            DataSize::from_bytes(1500),
        );
        // Ticks every 20 ms from the first packet at 0.
        assert_eq!(ticks[0].end, Instant::from_millis(20));
        assert!(
            ticks
                .windows(2)
                .all(|w| w[1].end - w[0].end == wisp_core::time::ms(20))
        );
        assert_eq!(ticks.len(), 299);
        // 10 packets per tick, counted exactly; received-or-lost counts every byte.
        let t = &ticks[100];
        assert_eq!(t.count, 10);
        assert_eq!(t.observation, Some(Observation::Exact(10)));
        assert_eq!(t.received_or_lost, 1010 * 1500);
        // The forecast is cautious: below the 80 packets the next 8 ticks will bring.
        let c = t.forecast.cumulative();
        assert!(c[7] < 80.0 && c[7] > 40.0, "{c:?}");
        assert!(c.windows(2).all(|w| w[0] <= w[1]));
        // In the silence the forecast falls to nothing.
        let last = ticks.last().unwrap();
        assert_eq!(last.count, 0);
        assert!(last.forecast.cumulative().iter().all(|&c| c == 0.0));
    }
}
