//! WMM priority classes for the emulated bottleneck: the simulator's DSCP → user priority (RFC
//! 8325) → access category mapping ([`wisp_sim::wifi::wmm`], re-exported here), served in
//! strict priority VO > VI > BE > BK.
//!
//! Deviations: a real WMM access point contends per access category with EDCA parameters (the
//! emulated Wi-Fi medium, `--downlink wifi:…`, does); a `--wmm` link has one server and serves
//! the four queues in strict priority, which is what Ping-Pair's measurement relies on (the
//! high-priority packet overtakes the queue). CS7/CS6 → UP 7 follows RFC 8325's table for
//! network control; an operator that does not treat them as network control overrides the
//! mapping (`--wmm-map`).

pub use wisp_sim::wifi::edca::AccessCategory;
pub use wisp_sim::wifi::wmm::{WmmMap, rfc8325_up};

/// The access categories in strict-priority order (VO first): the emulator's queue order.
pub const PRIORITY_ORDER: [AccessCategory; 4] = [
    AccessCategory::Vo,
    AccessCategory::Vi,
    AccessCategory::Be,
    AccessCategory::Bk,
];

/// The queue index of `ac` in [`PRIORITY_ORDER`].
pub fn priority_index(ac: AccessCategory) -> usize {
    3 - ac.index()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_order_is_vo_vi_be_bk() {
        for (i, ac) in PRIORITY_ORDER.iter().enumerate() {
            assert_eq!(priority_index(*ac), i);
        }
        // The emulator classifies with the simulator's map (RFC 8325): EF is voice.
        assert_eq!(
            priority_index(WmmMap::default().classify(&[0x45, 0xb8, 0, 0])),
            0
        );
    }
}
