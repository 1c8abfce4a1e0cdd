//! What a scheme's receiver believes about a link: its [`Forecaster`] fed by a saturated link
//! (`wisp forecast`).
//!
//! Every delivery opportunity of the trace delivers one MTU-sized packet, as if the sender kept
//! the queue full forever. The forecaster's record of every tick comes back in order.

use std::sync::Arc;
use wisp_core::scheme::{ForecastTick, Forecaster};
use wisp_core::{Duration, Instant};

use crate::trace::Trace;

/// Feeds `forecaster` `duration` of `trace` (repeating it as the simulator does) with the link
/// saturated, and returns every tick that ends within the run.
pub fn saturated(
    trace: &Arc<Trace>,
    duration: Duration,
    forecaster: &mut dyn Forecaster,
) -> Vec<ForecastTick> {
    let end = Instant::ZERO + duration;
    let mut ticks = Vec::with_capacity((duration.as_millis() / 20) as usize + 1);
    let mut cursor = trace.cursor_at(Instant::ZERO);
    loop {
        let (at, n) = cursor.peek();
        if at >= end {
            break;
        }
        for _ in 0..n {
            forecaster.on_delivery(at);
        }
        cursor.advance();
    }
    // Ticks that end within the run (a tick ending exactly at the end is left out, as the
    // simulator runs events before the end only).
    if end > Instant::ZERO {
        forecaster.ticks_until(end - Duration::from_nanos(1), &mut ticks);
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceUnit;
    use wisp_core::DataSize;
    use wisp_core::scheme::SchemeConfig;

    fn trace(text: &str) -> Arc<Trace> {
        Arc::new(Trace::parse(text, "t", TraceUnit::Millis).unwrap())
    }

    #[test]
    fn a_constant_link_is_forecast_below_its_rate_and_an_outage_at_zero() {
        // 500 packets/s for 4 s (one packet every 2 ms), then silence until 6 s.
        let mut text: String = (0..2000).map(|i| format!("{}\n", i * 2)).collect();
        text.push_str("6000\n");
        let scheme: SchemeConfig = "sprout".parse().unwrap();
        let mut f = scheme.forecaster(DataSize::from_bytes(1500)).unwrap();
        let ticks = saturated(&trace(&text), Duration::from_secs(6), &mut *f);
        // Ticks every 20 ms from the first packet at 0.
        assert_eq!(ticks[0].end, Instant::from_millis(20));
        assert!(
            ticks
                .windows(2)
                .all(|w| w[1].end - w[0].end == wisp_core::time::ms(20))
        );
        assert_eq!(ticks.len(), 299);
        // 10 packets per tick; received-or-lost counts every packet.
        let t = &ticks[100];
        assert_eq!(t.received_or_lost, 1010);
        // The forecast is cautious: below the 80 packets the next 8 ticks will bring.
        let c = &t.cumulative;
        assert!(c[7] < 80.0 && c[7] > 40.0, "{c:?}");
        assert!(c.windows(2).all(|w| w[0] <= w[1]));
        // In the silence the forecast falls to nothing.
        let last = ticks.last().unwrap();
        assert!(last.cumulative.iter().all(|&c| c == 0.0));
    }
}
