//! Piecewise-constant rate schedules — `(start, rate)` steps, each rate holding until the next
//! step's start — and how such a schedule serves bytes. Shared by the rate links ([`crate::link`])
//! and the mobile profiles' bottleneck ([`crate::mobile`]); neither imports the other for it.

use wisp_core::{Bitrate, Duration, Instant};

/// ∫ rate dt over [lo, hi) in bits.
pub(crate) fn rate_integral_bits(steps: &[(Instant, Bitrate)], lo: Instant, hi: Instant) -> f64 {
    let mut bits = 0.0;
    for (i, &(start, rate)) in steps.iter().enumerate() {
        let end = steps.get(i + 1).map_or(Instant::MAX, |s| s.0);
        let a = start.max(lo);
        let b = end.min(hi);
        if b > a {
            bits += rate.bps() as f64 * (b - a).as_secs_f64();
        }
    }
    bits
}

/// The earliest instant at or after `t` a piecewise-constant rate serves.
pub(crate) fn rate_next_start(steps: &[(Instant, Bitrate)], t: Instant) -> Option<Instant> {
    let i = steps.partition_point(|s| s.0 <= t).saturating_sub(1);
    if steps[i].1 > Bitrate::ZERO && steps[i].0 <= t {
        return Some(t);
    }
    steps[i..]
        .iter()
        .find(|s| s.0 > t && s.1 > Bitrate::ZERO)
        .map(|s| s.0)
}

/// When `size` bytes started at `t` finish at a piecewise-constant rate (`Instant::MAX`: never).
pub(crate) fn rate_serve(steps: &[(Instant, Bitrate)], t: Instant, size: u64) -> Instant {
    let mut bits = size as u128 * 8;
    let mut now = t;
    let mut i = steps.partition_point(|s| s.0 <= now).saturating_sub(1);
    loop {
        let rate = steps[i].1.bps() as u128;
        let end = steps.get(i + 1).map_or(Instant::MAX, |s| s.0);
        if rate > 0 {
            let need_ns = (bits * 1_000_000_000).div_ceil(rate);
            let avail_ns = (end - now).as_nanos() as u128;
            if need_ns <= avail_ns {
                return now + Duration::from_nanos(need_ns as u64);
            }
            bits -= avail_ns * rate / 1_000_000_000;
        }
        if end == Instant::MAX {
            return Instant::MAX;
        }
        now = end;
        i += 1;
    }
}
