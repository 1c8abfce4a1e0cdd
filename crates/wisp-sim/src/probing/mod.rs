//! Bandwidth probing tools on the simulated 802.11 medium: WBest's testbed (Li, Claypool,
//! Kinicki, LCN 2008, §III, Table I) and the tools driven through it.
//!
//! The testbed is one [`WifiLink`]: node 0 the AP, node 1 client A (the measured station,
//! the probes go AP → A, downstream as in the paper), nodes 2 and 3 clients B and C. The
//! background traffic of a [`Case`] is driven here, packet by packet through
//! [`WifiLink::push`]:
//!
//! * crossing UDP at rate r to a client: AP → client, constant bit rate, 1500-byte packets
//!   (random phase);
//! * contending UDP at rate r from a client: client → AP, likewise;
//! * crossing TCP to a client: the AP always has a 1500-byte segment for it (one refilled as
//!   soon as one is delivered or dropped), the client sends a 52-byte Ack for every second one;
//! * contending TCP from a client: the same with the roles swapped (client → AP data, Acks
//!   downstream).
//!
//! A probe run starts [`Testbed::warmup`] (2 s) after the background traffic (the paper: 5 s).
//! The ground truth ([`ground_truth`]) is the downstream throughput of a saturating 1500-byte
//! UDP flow AP → A in the same setting: the AP always has a packet for A (never empty, never
//! overflowing), measured over 5 s after the warm-up.
//!
//! The tools: [`wbest`], [`igi_ptr`], [`pathchirp`], [`pathload`], [`spruce`]; figures per case
//! in `docs/wbest.md` and `wisp reproduce wbest`.
//!
//! Deviations (see also `docs/wbest.md`):
//! - TCP is not a TCP: a backlogged sender with delayed Acks, no congestion control (as the
//!   link's own `load=tcp`); the paper sets the ground truth of TCP cases to 0, and so do the
//!   [`Case::paper_ground_truth`] figures, while [`ground_truth`] measures the medium's share.
//! - The saturating flow keeps the AP's queue for A non-empty instead of overflowing it with a
//!   CBR above the capacity (the medium's AP serves its destinations in turn, so an overflowing
//!   flow would only add queue drops of the crossing traffic).
//! - 802.11g at 54 Mbit/s for every node, legacy DCF (`wmm=off`), AP queue 100 frames (the
//!   paper's AP: a Cisco AP1121G; queue sizes of 40–300 in the paper's reference 25).
//!   Case 13's rate adaptation is Minstrel at an SNR of 15 dB for every node (the paper: an
//!   RSSI of −70 to −74 dBm, rates 1–48 Mbit/s).
//! - Probe packets carry 1500 bytes as IP packets (WBest's default is 1460 bytes of UDP
//!   payload, 1488 as IP).

pub mod igi_ptr;
pub mod pathchirp;
pub mod pathload;
pub mod spruce;
pub mod wbest;

use crate::wifi::link::{AP, NodeId, STATION, TCP_ACK_BYTES, WifiLink, WifiOutput, WifiSpec};
use rand::RngExt;
use wisp_core::{Bitrate, Duration, Instant};

/// Client B and C's node ids.
pub const CLIENT_B: NodeId = 2;
pub const CLIENT_C: NodeId = 3;

/// One background flow's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    Udp(Bitrate),
    Tcp,
}

/// One background flow: `crossing` = AP → client (shares the AP's downlink with the probes),
/// else client → AP (contends for the channel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub client: NodeId,
    pub crossing: bool,
    pub traffic: Traffic,
}

/// A row of Table I.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub id: u32,
    pub flows: Vec<Flow>,
    /// Case 13: Minstrel rate adaptation at a low SNR.
    pub rate_adaptation: bool,
}

const UDP_46: Traffic = Traffic::Udp(Bitrate::from_kbps(4600));
const UDP_23: Traffic = Traffic::Udp(Bitrate::from_kbps(2300));

impl Case {
    /// Table I's case `id` (0–13).
    pub fn table1(id: u32) -> Option<Case> {
        let x = |client, traffic| Flow {
            client,
            crossing: true,
            traffic,
        };
        let c = |client, traffic| Flow {
            client,
            crossing: false,
            traffic,
        };
        let (b, cc) = (CLIENT_B, CLIENT_C);
        let flows = match id {
            0 | 13 => vec![],
            1 => vec![x(b, UDP_46)],
            2 => vec![c(b, UDP_46)],
            3 => vec![x(b, Traffic::Tcp)],
            4 => vec![c(b, Traffic::Tcp)],
            5 => vec![x(b, UDP_23), x(cc, UDP_23)],
            6 => vec![c(b, UDP_23), c(cc, UDP_23)],
            7 => vec![x(b, Traffic::Tcp), x(cc, Traffic::Tcp)],
            8 => vec![c(b, Traffic::Tcp), c(cc, Traffic::Tcp)],
            9 => vec![x(b, UDP_23), c(cc, UDP_23)],
            10 => vec![x(b, Traffic::Tcp), c(cc, Traffic::Tcp)],
            11 => vec![x(b, UDP_23), c(cc, Traffic::Tcp)],
            12 => vec![x(b, Traffic::Tcp), c(cc, UDP_23)],
            _ => return None,
        };
        Some(Case {
            id,
            flows,
            rate_adaptation: id == 13,
        })
    }

    /// Every case of Table I.
    pub fn all() -> Vec<Case> {
        (0..=13).filter_map(Case::table1).collect()
    }

    /// A case with TCP traffic (the paper's ground truth is 0).
    pub fn has_tcp(&self) -> bool {
        self.flows.iter().any(|f| f.traffic == Traffic::Tcp)
    }

    /// Table II's ground truth in Mbit/s (`None`: case 6, "unknown").
    pub fn paper_ground_truth(&self) -> Option<f64> {
        Some(match self.id {
            0 => 28.94,
            1 => 24.39,
            2 => 20.52,
            5 => 24.50,
            6 => return None,
            9 => 16.26,
            13 => 15.26,
            _ => 0.0,
        })
    }

    /// Table II's median WBest estimate in Mbit/s.
    pub fn paper_wbest(&self) -> f64 {
        [
            28.47, 23.24, 15.76, 1.01, 0.00, 22.87, 14.56, 0.00, 0.00, 13.26, 0.00, 0.00, 0.00,
            13.99,
        ][self.id as usize]
    }

    /// The medium of this case.
    pub fn spec(&self) -> WifiSpec {
        let ra = if self.rate_adaptation {
            ",snr=15,ra=minstrel"
        } else {
            ""
        };
        format!("std=11g,rate=54mbps,stations=2,load=none,wmm=off,queue=100{ra}")
            .parse()
            .expect("a valid spec")
    }
}

/// Tags of the testbed's packets: the top byte says whose.
pub const TAG_PROBE: u64 = 1 << 56;
const TAG_ACK: u64 = 2 << 56;
const TAG_FLOW: u64 = 3 << 56;
const TAG_MASK: u64 = 0xff << 56;

#[derive(Clone, Copy, Debug)]
enum SourceState {
    Cbr { next: Instant, interval: Duration },
    Backlog { received: u32 },
}

#[derive(Clone, Copy, Debug)]
struct Source {
    from: NodeId,
    to: NodeId,
    state: SourceState,
}

/// The medium with a case's background traffic running; a tool pushes its own packets with
/// tags in [`TAG_PROBE`]'s range and gets their outputs back from [`Testbed::advance`].
#[derive(Debug)]
pub struct Testbed {
    pub link: WifiLink,
    sources: Vec<Source>,
    out: Vec<WifiOutput>,
    /// Time of the last push/advance (never goes back).
    now: Instant,
    /// Bytes of background traffic delivered per source.
    pub delivered: Vec<u64>,
}

/// 1500-byte packets throughout.
pub const PACKET_BYTES: u32 = 1500;

impl Testbed {
    /// How long the background runs before a tool starts.
    pub fn warmup() -> Duration {
        Duration::from_secs(2)
    }

    /// The setting of `case`, random draws from `seed`.
    pub fn new(case: &Case, seed: u64) -> Self {
        let mut link = WifiLink::new(&case.spec(), seed);
        let mut rng = crate::seed::stream(seed, "probing/phase");
        let mut sources = vec![];
        for f in &case.flows {
            let (from, to) = if f.crossing {
                (AP, f.client)
            } else {
                (f.client, AP)
            };
            let state = match f.traffic {
                Traffic::Udp(r) => {
                    let interval = Duration::from_secs_f64(
                        8.0 * f64::from(PACKET_BYTES) / (r.bps().max(1) as f64),
                    );
                    SourceState::Cbr {
                        next: Instant::ZERO + interval.mul_f64(rng.random::<f64>()),
                        interval,
                    }
                }
                Traffic::Tcp => SourceState::Backlog { received: 0 },
            };
            sources.push(Source { from, to, state });
        }
        let n = sources.len();
        for (i, s) in sources.iter().enumerate() {
            if let SourceState::Backlog { .. } = s.state {
                for _ in 0..2 {
                    link.push(
                        Instant::ZERO,
                        s.from,
                        s.to,
                        0,
                        TAG_FLOW | i as u64,
                        PACKET_BYTES,
                    );
                }
            }
        }
        Testbed {
            link,
            sources,
            out: vec![],
            now: Instant::ZERO,
            delivered: vec![0; n],
        }
    }

    /// The earliest instant something may happen (background arrival or the medium).
    pub fn next_event(&mut self) -> Option<Instant> {
        let cbr = self
            .sources
            .iter()
            .filter_map(|s| match s.state {
                SourceState::Cbr { next, .. } => Some(next),
                SourceState::Backlog { .. } => None,
            })
            .min();
        [cbr, self.link.next_event()].into_iter().flatten().min()
    }

    /// A tool's packet (tag below 2^56) from `from` to `to` at `now`.
    pub fn push(&mut self, now: Instant, from: NodeId, to: NodeId, tag: u64, bytes: u32) -> bool {
        self.catch_up(now);
        self.link
            .push(now, from, to, 0, TAG_PROBE | (tag & !TAG_MASK), bytes)
    }

    /// Background arrivals up to `now` (inclusive).
    fn catch_up(&mut self, now: Instant) {
        self.now = self.now.max(now);
        loop {
            let mut due: Option<(usize, Instant)> = None;
            for (i, s) in self.sources.iter().enumerate() {
                if let SourceState::Cbr { next, .. } = s.state {
                    if next <= now && due.is_none_or(|(_, t)| next < t) {
                        due = Some((i, next));
                    }
                }
            }
            let Some((i, t)) = due else { break };
            let s = &mut self.sources[i];
            if let SourceState::Cbr { next, interval } = &mut s.state {
                *next += *interval;
            }
            let (from, to) = (s.from, s.to);
            self.link
                .push(t, from, to, 0, TAG_FLOW | i as u64, PACKET_BYTES);
        }
    }

    /// Runs to `now`; the tool's outputs (tag with [`TAG_PROBE`] removed) go to `out`.
    pub fn advance(&mut self, now: Instant, out: &mut Vec<WifiOutput>) {
        self.catch_up(now);
        let mut buf = std::mem::take(&mut self.out);
        self.link.advance(now, &mut buf);
        for o in buf.drain(..) {
            match o.tag & TAG_MASK {
                TAG_PROBE => out.push(WifiOutput {
                    tag: o.tag & !TAG_MASK,
                    ..o
                }),
                TAG_FLOW => {
                    let i = (o.tag & !TAG_MASK) as usize;
                    if o.delivered {
                        self.delivered[i] += u64::from(o.record.msdu_bytes);
                    }
                    let s = &mut self.sources[i];
                    if let SourceState::Backlog { received } = &mut s.state {
                        let (from, to) = (s.from, s.to);
                        let mut ack = false;
                        if o.delivered {
                            *received += 1;
                            ack = *received % 2 == 0;
                        }
                        self.link
                            .push(o.at, from, to, 0, TAG_FLOW | i as u64, PACKET_BYTES);
                        if ack {
                            self.link.push(o.at, to, from, 0, TAG_ACK, TCP_ACK_BYTES);
                        }
                    }
                }
                _ => {}
            }
        }
        self.out = buf;
    }

    /// Sends a train AP → A: packet k of `bytes` at `start + offsets[k]`; runs until every
    /// packet's fate is decided (or 1 s after the last send). Returns the arrival instants
    /// (`None`: dropped) and the instant the last fate was known. `tag_base` keeps trains apart.
    pub fn probe_train(
        &mut self,
        start: Instant,
        offsets: &[Duration],
        bytes: u32,
        tag_base: u64,
    ) -> (Vec<Option<Instant>>, Instant) {
        let n = offsets.len();
        let mut arrivals = vec![None; n];
        let mut decided = 0;
        let mut sent = 0;
        let mut now = start;
        let mut last = start;
        let mut out = vec![];
        let deadline =
            start + offsets.last().copied().unwrap_or(Duration::ZERO) + Duration::from_secs(1);
        while decided < n && now <= deadline {
            while sent < n && start + offsets[sent] <= now {
                if !self.push(now, AP, STATION, tag_base + sent as u64, bytes) {
                    decided += 1; // dropped at the AP's queue
                }
                sent += 1;
            }
            self.advance(now, &mut out);
            for o in out.drain(..) {
                let k = o.tag.wrapping_sub(tag_base) as usize;
                if k < n {
                    decided += 1;
                    last = last.max(o.at);
                    if o.delivered {
                        arrivals[k] = Some(o.at);
                    }
                }
            }
            let next_send = (sent < n).then(|| start + offsets[sent]);
            match [next_send, self.next_event()].into_iter().flatten().min() {
                Some(t) => now = t.max(now),
                None => break,
            }
        }
        (arrivals, last.max(now.min(deadline)))
    }

    /// Runs the background alone until `until`.
    pub fn run_until(&mut self, until: Instant, out: &mut Vec<WifiOutput>) {
        while let Some(t) = self.next_event().filter(|&t| t <= until) {
            self.advance(t, out);
        }
        self.advance(until, out);
    }
}

/// The ground truth of `case`: the throughput (Mbit/s) of a saturating 1500-byte UDP flow
/// AP → A, over 5 s after the warm-up.
pub fn ground_truth(case: &Case, seed: u64) -> f64 {
    let mut tb = Testbed::new(case, seed);
    let mut out = vec![];
    let start = Instant::ZERO + Testbed::warmup();
    let end = start + Duration::from_secs(5);
    tb.run_until(start, &mut out);
    out.clear();
    let mut seq = 0u64;
    for _ in 0..2 {
        tb.push(start, AP, STATION, seq, PACKET_BYTES);
        seq += 1;
    }
    let mut bytes = 0u64;
    while let Some(t) = tb.next_event().filter(|&t| t <= end) {
        tb.advance(t, &mut out);
        for o in out.drain(..) {
            if o.delivered && o.at <= end {
                bytes += u64::from(o.record.msdu_bytes);
            }
            tb.push(o.at, AP, STATION, seq, PACKET_BYTES);
            seq += 1;
        }
    }
    bytes as f64 * 8.0 / 5.0 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::bianchi::bianchi_difs_mbps;

    #[test]
    fn idle_ground_truth_is_one_saturated_station() {
        // One saturated sender on an idle 11g channel: Bianchi's model with n = 1 (no
        // collisions) is the independent figure.
        let case = Case::table1(0).unwrap();
        let gt = ground_truth(&case, 1);
        let phy = crate::wifi::phy::Phy::new(crate::wifi::phy::Standard::G);
        let model = bianchi_difs_mbps(&phy, case.spec().rate, 1, PACKET_BYTES);
        assert!(
            (gt - model).abs() / model < 0.03,
            "{gt} vs Bianchi n=1 {model}"
        );
    }

    #[test]
    fn udp_crossing_takes_its_rate_off_the_ground_truth() {
        let idle = ground_truth(&Case::table1(0).unwrap(), 1);
        let crossing = ground_truth(&Case::table1(1).unwrap(), 1);
        // 4.6 Mbit/s of 1500-byte frames at the same PHY rate costs ~4.6 Mbit/s of the AP's
        // throughput (same frame size, same airtime per bit).
        assert!(
            ((idle - crossing) - 4.6).abs() < 0.8,
            "idle {idle} crossing {crossing}"
        );
    }
}
