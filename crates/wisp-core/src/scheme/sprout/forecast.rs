//! Sprout's receiver as a [`Forecaster`]: what Sprout believes about a link that a sender keeps
//! saturated (`wisp forecast`).
//!
//! Every delivery is one MTU-sized packet whose fields promise no gap
//! ([`SproutFields::SATURATED`]); the receiver's record of each tick — received-or-lost and
//! the forecast — is read as the tick ends. Timers due at a delivery's instant fire before the
//! delivery, as in the simulator.

use super::SproutConfig;
use super::receiver::SproutReceiver;
use super::wire::SproutFields;
use crate::controller::Receiver;
use crate::packet::{Content, DataHeader, Ecn, SchemeFields};
use crate::scheme::{ForecastTick, Forecaster};
use crate::tables::Tables;
use crate::time::Instant;
use crate::units::DataSize;

/// A Sprout receiver fed a saturated link.
#[derive(Debug)]
pub struct SaturatedSprout {
    rx: SproutReceiver,
    mtu: DataSize,
    horizon: usize,
    seq: u64,
    /// Ticks ended before the last delivery, not handed out yet.
    pending: Vec<ForecastTick>,
}

impl SaturatedSprout {
    pub fn new(config: &SproutConfig, mtu: DataSize) -> Self {
        SaturatedSprout {
            rx: SproutReceiver::new(config, mtu, &Tables::new()),
            mtu,
            horizon: config.model.ticks,
            seq: 0,
            pending: vec![],
        }
    }

    /// Fires the receiver's timers due at or before `t`, keeping each tick it ends.
    fn run_until(&mut self, t: Instant) {
        while let Some(at) = self.rx.poll_timeout().filter(|&at| at <= t) {
            self.rx.on_timeout(at);
            if let Some(r) = self.rx.last_tick() {
                self.pending.push(ForecastTick {
                    end: r.end,
                    received_or_lost: r.received_or_lost / self.mtu.bytes(),
                    cumulative: r.forecast.cumulative().to_vec(),
                });
            }
        }
    }
}

impl Forecaster for SaturatedSprout {
    fn horizon(&self) -> usize {
        self.horizon
    }

    fn on_delivery(&mut self, at: Instant) {
        self.run_until(at);
        let h = DataHeader {
            seq: self.seq,
            byte_seq: self.seq * self.mtu.bytes(),
            send_time: at,
            size: self.mtu,
            content: Content::Bulk,
            ecn: Ecn::NotEct,
            fields: SchemeFields::EMPTY,
        };
        self.rx.on_packet_received(at, &h, &SproutFields::SATURATED);
        self.seq += 1;
    }

    fn ticks_until(&mut self, until: Instant, out: &mut Vec<ForecastTick>) {
        self.run_until(until);
        out.append(&mut self.pending);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::sprout::Observation;

    /// 500 packets/s (one every 2 ms): each 20-ms tick counts 10 packets exactly.
    #[test]
    fn a_constant_link_is_counted_exactly() {
        let mut f = SaturatedSprout::new(&SproutConfig::default(), DataSize::from_bytes(1500));
        for i in 0..1000 {
            f.on_delivery(Instant::from_millis(i * 2));
        }
        let mut ticks = vec![];
        f.ticks_until(Instant::from_millis(1999), &mut ticks);
        let r = f.rx.last_tick().unwrap();
        assert_eq!(r.count, 10);
        assert_eq!(r.observation, Some(Observation::Exact(10)));
        assert_eq!(ticks.last().unwrap().end, r.end);
        assert_eq!(ticks[50].received_or_lost, 510);
        assert_eq!(ticks[50].cumulative.len(), f.horizon());
    }
}
