//! RFC 8869 §4's Wi-Fi cases on the 802.11 medium, with the parameters cisco/ns3-rmcat's Wi-Fi
//! suite (`test/rmcat-wifi-test-suite.cc`, after draft-ietf-rmcat-wireless-tests-04 §4) sets:
//!
//! * a wire between the media server and the AP, 50 ms one way, a 300-ms drop-tail queue at
//!   each end; one AP and one station per flow (media, CBR or TCP), 802.11n at 5 GHz, 20 MHz,
//!   the long guard interval, a fixed rate of 52 Mbit/s (ns-3's `HtMcs11`), QoS and HT on
//!   (A-MPDU, as ns-3's HT default for best effort), MAC queues of 1000 frames that drop a
//!   frame after 300 ms in them; 120 s;
//! * §4.1, the bottleneck on the wire (1 Mbit/s): one downlink media flow (`wifi-4.1.a`), one
//!   uplink (`.b`), one each way (`.c`), and `.c` with one CBR flow of 300 kbit/s over 40–80 s
//!   downlink (`.d`) or uplink (`.e`), or one NewReno flow over 40–80 s downlink (`.f`) or
//!   uplink (`.g`);
//! * §4.2, the bottleneck on the medium (the wire at 100 Mbit/s): 16, 24 or 32 media flows
//!   downlink (`wifi-4.2.a-N`), uplink (`.b-N`) or half each way (`.c-N`); and 12 each way with
//!   4 uplink CBR flows of 600 kbit/s (`.d-24`) or 4 uplink NewReno flows (`.e-24`) over
//!   40–80 s;
//! * a downlink `kwikr` flow's station runs Ping-Pair to the AP (its T_c), as on `wisp run
//!   --link wifi:…`; an uplink one has none (Ping-Pair measures the AP's downlink queue).
//!
//! Checked per direction over the run's second half (the queue over all of it), or, where
//! cross traffic runs, over each of the three phases (0–40, 40–80, 80–120 s, each measured
//! so): on the wired bottleneck (§4.1) the utilisation, the queue and, where TCP runs, each
//! side's share, as RFC 8867's wired cases; on the medium (§4.2) the queue and Jain's index
//! among the direction's media flows, and each side's share where TCP runs. The medium's
//! capacity depends on who contends for it, so §4.2's utilisation is reported (against the
//! wire's capacity) and not checked. RFC 8869's words for the expected behaviour were not
//! re-read here (cisco/ns3-rmcat's suite, which gives the parameters, checks nothing): the
//! checks are wisp's reading, the same numbers as the wired cases'.
//!
//! Deviations:
//! * Mbit/s and kbit/s are 10⁶ and 10³ bit/s (ns3-rmcat's are 2²⁰ and 2¹⁰).
//! * `HtMcs11` is two spatial streams of 16-QAM ½; wisp's HT PHY has one, so the rate is MCS 5
//!   (64-QAM ⅔), the same 52 Mbit/s; its preamble has one HT-LTF where MCS 11's has two
//!   (4 µs less per PPDU).
//! * ns-3's MAC queue drops a frame older than 300 ms (`MaxDelay`) wherever it is in the
//!   queue; wisp's (`lifetime=300`) drops it when it comes to the head before its first
//!   attempt, as the medium picks its next transmission (a retried A-MPDU's younger frames
//!   behind it go out as they are).
//! * CBR flows send full-size packets (ns3-rmcat's send 1000-byte datagrams).
//! * The reverse wire's 50 ms is crossed at the station, before the medium, as the forward
//!   wire's is before its queue: a packet's delivery less its first enqueue is then its
//!   queueing and access delay alone, in either direction.

use super::{Asks, Error, FAIR, Parts, Roles, UTIL_QUEUE, flow, model, phases, pipe};
use super::{queue_300ms, wired};
use crate::path::Hop;
use crate::sim::{RoutedFlow, WifiMedium};
use crate::wifi::link::{AP, NodeId, STATION, WifiLink, WifiSpec};

/// The medium of every case: RFC 8869 §4 as ns3-rmcat sets it.
pub const MEDIUM: &str =
    "std=11n-5,rate=52,bw=20,gi=long,ampdu=on,wmm=on,queue=1000,lifetime=300,stations=0";

/// What a case runs: media flows each way, and its cross traffic.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mix {
    down: usize,
    up: usize,
    /// Cross traffic over the middle phase: (scheme, flows, downlink).
    cross: Option<(&'static str, usize, bool)>,
    /// The wire's Mbit/s: the bottleneck (§4.1) or not (§4.2).
    wire_mbps: f64,
}

fn mix(id: &str) -> Option<Mix> {
    let wired = |down, up, cross| Mix {
        down,
        up,
        cross,
        wire_mbps: 1.0,
    };
    let medium = |down, up, cross| Mix {
        down,
        up,
        cross,
        wire_mbps: 100.0,
    };
    Some(match id {
        "wifi-4.1.a" => wired(1, 0, None),
        "wifi-4.1.b" => wired(0, 1, None),
        "wifi-4.1.c" => wired(1, 1, None),
        "wifi-4.1.d" => wired(1, 1, Some(("cbr:rate-kbps=300", 1, true))),
        "wifi-4.1.e" => wired(1, 1, Some(("cbr:rate-kbps=300", 1, false))),
        "wifi-4.1.f" => wired(1, 1, Some(("newreno", 1, true))),
        "wifi-4.1.g" => wired(1, 1, Some(("newreno", 1, false))),
        "wifi-4.2.d-24" => medium(12, 12, Some(("cbr:rate-kbps=600", 4, false))),
        "wifi-4.2.e-24" => medium(12, 12, Some(("newreno", 4, false))),
        _ => {
            let (kind, n) = id.strip_prefix("wifi-4.2.")?.split_once('-')?;
            let n: usize = n.parse().ok()?;
            match kind {
                "a" => medium(n, 0, None),
                "b" => medium(0, n, None),
                "c" => medium(n / 2, n / 2, None),
                _ => return None,
            }
        }
    })
}

/// Whether `id` is one of the Wi-Fi cases.
pub fn is_wifi(id: &str) -> bool {
    id.starts_with("wifi-")
}

/// The links, medium, flows and windows of Wi-Fi case `id` for `scheme`.
pub(super) fn case(
    id: &str,
    scheme: &str,
    quick: bool,
    roles: &mut Roles,
) -> Result<(Parts, WifiMedium), Error> {
    let m = mix(id).ok_or_else(|| Error::Setup(format!("no case `{id}`")))?;
    let k = if quick { 0.5 } else { 1.0 };
    let end = 120.0 * k;
    let (on, off) = (40.0 * k, 80.0 * k);
    let spec: WifiSpec = (MEDIUM.parse())
        .map_err(|e| Error::Setup(format!("the RFC 8869 medium `{MEDIUM}`: {e}")))?;
    let links = wire(m.wire_mbps)?;
    // One station per flow, in ns3-rmcat's order: media down, media up, then cross traffic.
    let first_extra = WifiLink::new(&spec, 0).nodes();
    let station = |i: usize| -> NodeId {
        if i == 0 {
            STATION
        } else {
            first_extra + i as NodeId - 1
        }
    };
    // The wire is the reference (its capacity in the figures) where it is the bottleneck.
    let bottleneck = m.wire_mbps < 100.0;
    let mut flows = vec![];
    let (mut down, mut up) = (vec![], vec![]);
    for downlink in [true, false] {
        for _ in 0..if downlink { m.down } else { m.up } {
            let i = flows.len();
            flows.push(routed(scheme, station(i), downlink, bottleneck));
            roles.media.push(i);
            if downlink { &mut down } else { &mut up }.push(i);
        }
    }
    if let Some((cross, n, downlink)) = m.cross {
        for _ in 0..n {
            let i = flows.len();
            let mut f = routed(cross, station(i), downlink, bottleneck);
            f.spec.start = wisp_core::Duration::from_secs_f64(on);
            f.spec.stop = Some(wisp_core::Duration::from_secs_f64(off));
            flows.push(f);
            roles.tcp.push(i);
        }
    }
    let bounds: &[f64] = if m.cross.is_some() {
        &[0.0, on, off, end]
    } else {
        &[0.0, end]
    };
    let mut windows = vec![];
    for (link, tag, media, downlink) in [(0u16, "down ", &down, true), (1, "up ", &up, false)] {
        if media.is_empty() {
            continue;
        }
        let mut w = phases(bounds, link, media, asks(&m, false, downlink), tag);
        // The middle phase, where cross traffic runs, may ask for the shares instead.
        if let Some(middle) = w.get_mut(1) {
            middle.asks = asks(&m, true, downlink);
        }
        windows.extend(w);
    }
    let medium = WifiMedium {
        label: "wifi".into(),
        spec,
        extra_stations: flows.len().saturating_sub(1) as u32,
    };
    Ok(((links, flows, windows, end), medium))
}

/// The wire between the server and the AP at `mbps`, 300-ms queues at both ends: forward
/// (link 0, its 50 ms before its queue), back (link 1) and the back direction's 50 ms (link 2,
/// crossed at the station).
fn wire(mbps: f64) -> Result<Vec<crate::sim::WiredLink>, Error> {
    let rate = format!("const:{}kbps", (mbps * 1000.0).round());
    Ok(vec![
        wired(
            "wire, server → AP",
            Some(model(&rate)?),
            queue_300ms(mbps),
            50,
        ),
        wired(
            "wire, AP → server",
            Some(model(&rate)?),
            queue_300ms(mbps),
            0,
        ),
        pipe("wire's propagation, AP → server", 50),
    ])
}

/// A flow of `scheme` between the server and station `st`, down or up; its reference the wire
/// it crosses when the wire is the `bottleneck`.
fn routed(scheme: &str, st: NodeId, downlink: bool, bottleneck: bool) -> RoutedFlow {
    let (down, up) = (
        Hop::Wifi {
            medium: 0,
            from: AP,
            to: st,
        },
        Hop::Wifi {
            medium: 0,
            from: st,
            to: AP,
        },
    );
    let base = flow(scheme, 0.0, None, 0, 1);
    if downlink {
        let data = vec![Hop::Link(0), down];
        RoutedFlow {
            // Kwikr's station probes its AP (as `wisp run --link wifi:…` does).
            pingpair: crate::pingpair::default_for(&base.spec.scheme, &data),
            data,
            feedback: vec![Hop::Link(2), up, Hop::Link(1)],
            reference: bottleneck.then_some(0),
            ..base
        }
    } else {
        RoutedFlow {
            data: vec![Hop::Link(2), up, Hop::Link(1)],
            feedback: vec![Hop::Link(0), down],
            reference: bottleneck.then_some(1),
            ..base
        }
    }
}

/// The checks of a direction's window: on the wire (§4.1) utilisation and queue, on the
/// medium (§4.2) queue and Jain; in the `middle` phase, against TCP in the same direction,
/// each side's share instead of the utilisation.
fn asks(m: &Mix, middle: bool, downlink: bool) -> Asks {
    let base = if m.wire_mbps < 100.0 {
        UTIL_QUEUE
    } else {
        Asks {
            util: false,
            ..FAIR
        }
    };
    let tcp_here = matches!(m.cross, Some(("newreno", _, d)) if d == downlink);
    if middle && tcp_here {
        Asks {
            shares: true,
            util: false,
            ..base
        }
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_has_its_mix() {
        let ids: Vec<&str> = (super::super::CASES.iter())
            .map(|c| c.id)
            .filter(|id| is_wifi(id))
            .collect();
        assert_eq!(ids.len(), 18);
        for id in ids {
            assert!(mix(id).is_some(), "{id}");
        }
        assert_eq!(mix("wifi-4.2.c-32").map(|m| (m.down, m.up)), Some((16, 16)));
        assert!(mix("wifi-4.2.z-16").is_none() && mix("wifi-4.3").is_none());
    }

    #[test]
    fn each_flow_has_its_own_station_and_the_wire_both_ways() {
        let mut roles = Roles::default();
        let ((links, flows, windows, end), medium) =
            case("wifi-4.1.f", "nada", false, &mut roles).unwrap();
        assert_eq!(end, 120.0);
        assert_eq!(flows.len(), 3);
        assert_eq!(medium.extra_stations, 2);
        assert_eq!(
            (roles.media.clone(), roles.tcp.clone()),
            (vec![0, 1], vec![2])
        );
        let stations: Vec<NodeId> = (flows.iter())
            .map(|f| {
                let hop = f.data.iter().find_map(|h| match *h {
                    Hop::Wifi { from, to, .. } => Some(if from == AP { to } else { from }),
                    _ => None,
                });
                hop.unwrap()
            })
            .collect();
        assert_eq!(stations, [1, 2, 3]);
        // 50 ms one way on the wire whichever the direction, and the bottleneck at 1 Mbit/s.
        let one_way = |route: &[Hop]| -> u64 {
            (route.iter())
                .filter_map(|h| match h {
                    Hop::Link(l) => Some(links[*l as usize].delay.as_millis()),
                    _ => None,
                })
                .sum()
        };
        for f in &flows {
            assert_eq!((one_way(&f.data), one_way(&f.feedback)), (50, 50));
        }
        // The downlink TCP flow runs 40–80 s; the downlink's middle phase checks the shares.
        assert_eq!(flows[2].spec.start.as_secs_f64(), 40.0);
        let down_middle = windows.iter().find(|w| w.label == "down 40–80 s").unwrap();
        assert!(down_middle.asks.shares && !down_middle.asks.util);
        let up_middle = windows.iter().find(|w| w.label == "up 40–80 s").unwrap();
        assert!(up_middle.asks.util && !up_middle.asks.shares);
        // Kwikr probes on its downlink flow only.
        let ((_, flows, _, _), _) =
            case("wifi-4.1.c", "kwikr", false, &mut Roles::default()).unwrap();
        let probing: Vec<bool> = flows.iter().map(|f| f.pingpair.is_some()).collect();
        assert_eq!(probing, [true, false]);
    }
}
