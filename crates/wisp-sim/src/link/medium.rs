//! The 802.11 medium as a link kind, `wifi[:KEY=VALUE,…]` ([`crate::wifi::link`]).
//!
//! It parses and is listed like every kind, but its spec ([`LinkSpec::Wifi`]) loads into no
//! [`LinkModel`](super::LinkModel): the medium is a hop that the AP, its stations and both
//! directions of a flow share, with queues per access category, not a server that drains one
//! queue. [`LinkSpec::medium`] hands the spec to a caller that has a Wi-Fi hop to run it on
//! (the engine's [`Hop::Wifi`](crate::path::Hop::Wifi), the emulator's `WifiHop`).

use super::LinkSpec;
use super::contract::{LinkKind, LinkName};
use crate::trace::TraceError;
use crate::wifi::link::{WifiSpec, WifiSpecError};

/// `wifi[:KEY=VALUE,…]`.
#[derive(Clone, Copy, Debug)]
pub struct WifiKind;

impl LinkKind for WifiKind {
    fn names(&self) -> &'static [LinkName] {
        &[LinkName {
            name: "wifi",
            usage: "wifi[:…]",
            help: "the simulated 802.11 EDCA medium with contending stations, e.g. \
                   wifi:std=11g,rate=54mbps,stations=4,load=tcp — keys std, rate, stations, \
                   load, queue, wmm, bytes, …; see docs/wifi.md",
        }]
    }

    fn parse(&self, _name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
        match args {
            None => Ok(LinkSpec::Wifi(WifiSpec::default())),
            Some(a) => a
                .parse()
                .map(LinkSpec::Wifi)
                .map_err(|e: WifiSpecError| e.to_string()),
        }
    }
}

/// Why a `wifi:` spec does not load as a [`LinkModel`](super::LinkModel).
pub(super) fn not_a_server(w: &WifiSpec) -> TraceError {
    TraceError {
        file: format!("wifi:{w}"),
        line: None,
        message: "the wifi medium is not supported here yet (it runs in `wisp link` and on the \
                  engine's Wi-Fi hop, not as a single-bottleneck link)"
            .into(),
    }
}
