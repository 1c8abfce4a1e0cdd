//! # wisp-net
//!
//! The only layer of wisp that reads a clock. It converts the operating system's monotonic clock
//! to [`wisp_core::Instant`] at the edge, so the same controller objects that run in the
//! simulator drive real packets. The UDP transport, the TUN/netns link emulator and the probing
//! tools build on [`Clock`].

use wisp_core::{Duration, Instant};

/// The monotonic clock, as `wisp_core::Instant` nanoseconds since the clock was created.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    epoch: std::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn new() -> Self {
        Clock {
            epoch: std::time::Instant::now(),
        }
    }

    /// Now, as a core instant.
    pub fn now(&self) -> Instant {
        self.to_core(std::time::Instant::now())
    }

    /// Converts an OS instant (e.g. a receive timestamp) to a core instant; instants before the
    /// epoch map to the epoch.
    pub fn to_core(&self, t: std::time::Instant) -> Instant {
        let d = t.saturating_duration_since(self.epoch);
        Instant::from_nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// Converts a core instant back to an OS instant (for sleeping until it).
    pub fn to_std(&self, t: Instant) -> std::time::Instant {
        self.epoch + std::time::Duration::from_nanos(t.as_nanos())
    }

    /// A core duration as a std duration.
    pub fn std_duration(d: Duration) -> std::time::Duration {
        std::time::Duration::from_nanos(d.as_nanos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_monotonic_and_round_trips() {
        let c = Clock::new();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        let t = Instant::from_millis(5);
        assert_eq!(c.to_core(c.to_std(t)), t);
    }
}
