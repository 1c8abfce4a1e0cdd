//! EDCA — IEEE 802.11-2016 10.22.2 (EDCAF backoff), Table 9-137 (default EDCA parameters).
//!
//! One EDCA function (EDCAF) per transmitter and access category: its parameters (AIFSN,
//! CWmin, CWmax, TXOP limit, retry limit) and its backoff state (contention window, backoff
//! counter, retry count). The channel decides when the counter runs; this module only keeps it.
//!
//! Equations (10.22.2.2–10.22.2.4):
//! - Backoff counter: uniform integer in `[0, CW]`, `CW = CWmin` initially.
//! - After a failed attempt: `CW ← min(2·(CW + 1) − 1, CWmax)`; the frame is dropped when the
//!   failed attempts reach the retry limit (dot11ShortRetryLimit = 7), and then `CW ← CWmin`.
//! - After a success (or a drop): `CW ← CWmin` and a new counter is drawn (post-backoff).
//! - Default parameters (Table 9-137), aCWmin/aCWmax from the PHY:
//!
//! | AC | AIFSN | CWmin | CWmax | TXOP (OFDM / DSSS) |
//! |---|---|---|---|---|
//! | BK | 7 | aCWmin | aCWmax | 0 |
//! | BE | 3 | aCWmin | aCWmax | 0 |
//! | VI | 2 | (aCWmin+1)/2 − 1 | aCWmin | 3.008 ms / 6.016 ms |
//! | VO | 2 | (aCWmin+1)/4 − 1 | (aCWmin+1)/2 − 1 | 1.504 ms / 3.264 ms |
//!
//! DCF (no QoS) is AIFSN 2 (AIFS = DIFS), aCWmin/aCWmax and no TXOP: [`EdcaParams::dcf`].
//!
//! Deviations:
//! - One retry limit (the short one); no long retry limit since RTS/CTS is not modelled.
//! - The AP's own parameter set (hostapd's `tx_queue_data*`) is not a preset yet.

use super::phy::{Phy, Standard};
use rand::{Rng, RngExt};
use wisp_core::Duration;

/// dot11ShortRetryLimit: attempts of a frame before it is dropped.
pub const DEFAULT_RETRY_LIMIT: u32 = 7;

/// A WMM access category, ordered by priority (`Bk < Be < Vi < Vo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessCategory {
    Bk = 0,
    Be = 1,
    Vi = 2,
    Vo = 3,
}

impl AccessCategory {
    pub const ALL: [AccessCategory; 4] = [
        AccessCategory::Bk,
        AccessCategory::Be,
        AccessCategory::Vi,
        AccessCategory::Vo,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            AccessCategory::Bk => "AC_BK",
            AccessCategory::Be => "AC_BE",
            AccessCategory::Vi => "AC_VI",
            AccessCategory::Vo => "AC_VO",
        }
    }
}

/// The parameters of one EDCAF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdcaParams {
    pub aifsn: u8,
    pub cw_min: u16,
    pub cw_max: u16,
    /// Longest TXOP; zero: one frame exchange per access.
    pub txop_limit: Duration,
    /// Attempts of a frame before it is dropped; `u32::MAX` retries for ever.
    pub retry_limit: u32,
}

impl EdcaParams {
    /// The DCF: AIFS = DIFS, the PHY's aCWmin/aCWmax, no TXOP.
    pub fn dcf(phy: &Phy) -> Self {
        EdcaParams {
            aifsn: 2,
            cw_min: phy.cw_min,
            cw_max: phy.cw_max,
            txop_limit: Duration::ZERO,
            retry_limit: DEFAULT_RETRY_LIMIT,
        }
    }

    /// A non-AP station's default parameters for `ac` (Table 9-137).
    pub fn default_for(ac: AccessCategory, phy: &Phy) -> Self {
        let (a, b) = (phy.cw_min, phy.cw_max);
        // (aCWmin + 1)/2 − 1 and (aCWmin + 1)/4 − 1, aCWmin being 2^k − 1.
        let half = a.div_ceil(2) - 1;
        let quarter = (a + 1) / 4 - 1;
        let dsss = phy.standard == Standard::B;
        let us = Duration::from_micros;
        let (aifsn, cw_min, cw_max, txop) = match ac {
            AccessCategory::Bk => (7, a, b, Duration::ZERO),
            AccessCategory::Be => (3, a, b, Duration::ZERO),
            AccessCategory::Vi => (2, half, a, us(if dsss { 6016 } else { 3008 })),
            AccessCategory::Vo => (2, quarter, half, us(if dsss { 3264 } else { 1504 })),
        };
        EdcaParams {
            aifsn,
            cw_min,
            cw_max,
            txop_limit: txop,
            retry_limit: DEFAULT_RETRY_LIMIT,
        }
    }
}

/// What happens to a frame after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    Retry,
    Drop,
}

/// One EDCAF's backoff state.
#[derive(Clone, Debug)]
pub struct Edcaf {
    pub params: EdcaParams,
    cw: u16,
    counter: u32,
    /// Failed attempts of the head frame.
    failures: u32,
}

impl Edcaf {
    /// A fresh EDCAF with a counter drawn from `[0, CWmin]`.
    pub fn new(params: EdcaParams, rng: &mut impl Rng) -> Self {
        let mut e = Edcaf {
            params,
            cw: params.cw_min,
            counter: 0,
            failures: 0,
        };
        e.draw(rng);
        e
    }

    fn draw(&mut self, rng: &mut impl Rng) {
        self.counter = rng.random_range(0..=u32::from(self.cw));
    }

    /// The contention window.
    pub fn cw(&self) -> u16 {
        self.cw
    }

    /// Backoff slots left.
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// Failed attempts of the head frame so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Draws a new counter from the current window (a frame arrived at an empty queue while
    /// the medium was busy or idle for less than AIFS, its counter being zero: 10.22.2.3).
    pub fn backoff(&mut self, rng: &mut impl Rng) {
        self.draw(rng);
    }

    /// Counts down `slots` idle slots (never below zero).
    pub fn count_down(&mut self, slots: u32) {
        self.counter = self.counter.saturating_sub(slots);
    }

    /// The head frame was acknowledged: reset CW, draw a new counter.
    pub fn on_success(&mut self, rng: &mut impl Rng) {
        self.cw = self.params.cw_min;
        self.failures = 0;
        self.draw(rng);
    }

    /// The head frame's attempt failed (collision, error, internal collision): double CW and
    /// retry, or drop the frame at the retry limit (then reset CW). A new counter either way.
    pub fn on_failure(&mut self, rng: &mut impl Rng) -> AfterFailure {
        self.failures += 1;
        let verdict = if self.failures >= self.params.retry_limit {
            self.cw = self.params.cw_min;
            self.failures = 0;
            AfterFailure::Drop
        } else {
            let doubled = 2 * (u32::from(self.cw) + 1) - 1;
            self.cw = doubled.min(u32::from(self.params.cw_max)) as u16;
            AfterFailure::Retry
        };
        self.draw(rng);
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn default_parameter_sets() {
        let ofdm = Phy::new(Standard::A);
        let vo = EdcaParams::default_for(AccessCategory::Vo, &ofdm);
        assert_eq!((vo.aifsn, vo.cw_min, vo.cw_max), (2, 3, 7));
        assert_eq!(vo.txop_limit, Duration::from_micros(1504));
        let vi = EdcaParams::default_for(AccessCategory::Vi, &ofdm);
        assert_eq!((vi.aifsn, vi.cw_min, vi.cw_max), (2, 7, 15));
        let be = EdcaParams::default_for(AccessCategory::Be, &ofdm);
        assert_eq!((be.aifsn, be.cw_min, be.cw_max), (3, 15, 1023));
        let bk = EdcaParams::default_for(AccessCategory::Bk, &ofdm);
        assert_eq!(bk.aifsn, 7);
        let dsss = Phy::new(Standard::B);
        let vo = EdcaParams::default_for(AccessCategory::Vo, &dsss);
        assert_eq!((vo.cw_min, vo.cw_max), (7, 15));
        assert_eq!(vo.txop_limit, Duration::from_micros(3264));
        assert_eq!(EdcaParams::dcf(&dsss).cw_min, 31);
    }

    #[test]
    fn binary_exponential_backoff_and_retry_limit() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let params = EdcaParams::dcf(&Phy::new(Standard::A));
        let mut e = Edcaf::new(params, &mut rng);
        assert!(e.counter() <= 15);
        // 15 → 31 → 63 → 127 → 255 → 511 → 1023 (CWmax), then the 7th failure drops.
        let mut cws = vec![];
        for _ in 0..6 {
            assert_eq!(e.on_failure(&mut rng), AfterFailure::Retry);
            cws.push(e.cw());
            assert!(e.counter() <= u32::from(e.cw()));
        }
        assert_eq!(cws, [31, 63, 127, 255, 511, 1023]);
        assert_eq!(e.on_failure(&mut rng), AfterFailure::Drop);
        assert_eq!(e.cw(), 15);
        assert_eq!(e.failures(), 0);
        e.on_failure(&mut rng);
        e.on_success(&mut rng);
        assert_eq!(e.cw(), 15);
        assert_eq!(e.failures(), 0);
    }

    #[test]
    fn counters_are_uniform_over_the_window() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let params = EdcaParams::dcf(&Phy::new(Standard::A));
        let mut e = Edcaf::new(params, &mut rng);
        let mut hist = [0u32; 16];
        for _ in 0..16_000 {
            e.on_success(&mut rng);
            hist[e.counter() as usize] += 1;
        }
        for h in hist {
            assert!((850..1150).contains(&h), "{hist:?}");
        }
        e.count_down(100);
        assert_eq!(e.counter(), 0);
    }
}
