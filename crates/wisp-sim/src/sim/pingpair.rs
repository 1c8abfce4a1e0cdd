//! Ping-Pair as an engine agent ([`super::agent`]): a flow's prober at the station that
//! receives its data over the last Wi-Fi hop of its data path, pinging that station's AP
//! ([`crate::pingpair`] describes the probing, its spec and its ground truth).
//!
//! Two timers: [`WAKE`], the prober's own wake-ups (it sends the pairs that are due and times
//! out the lost ones), and [`SAMPLE`], the AP queue's occupancy every `sample` (the medium is
//! run up to now first). The AP answers a request the instant the medium delivers it; a reply
//! the station gets goes to the prober, and each finished pair to the log and the flow's
//! receiver.

use super::SimError;
use super::agent::{Agent, AgentCx};
use super::events::{MediumId, Timer};
use crate::path::Hop;
use crate::pingpair::{PROBE_BYTES, PingPairSpec, PingRecord, QueueSample, tos_dscp};
use crate::wifi::edca::AccessCategory;
use crate::wifi::link::{NodeId, WifiLink, WifiOutput};
use std::collections::{BTreeMap, VecDeque};
use wisp_core::controller::WireReceiver;
use wisp_core::pingpair::{Prober, ProberConfig, ProberEvent, Role};
use wisp_core::{Bitrate, Duration, Instant};

/// The prober may have something to do.
const WAKE: Timer = Timer(0);
/// Time to sample the AP queue.
const SAMPLE: Timer = Timer(1);

/// A flow's Ping-Pair prober at its station.
#[derive(Debug)]
pub(crate) struct PingPairAgent {
    /// The flow it probes for (its records name it).
    flow: u16,
    /// When the flow stops: no pair, no sample after it.
    stop: Instant,
    spec: PingPairSpec,
    prober: Prober,
    medium: u16,
    station: NodeId,
    ap: NodeId,
    /// The access category of the normal ping (queue samples).
    sample_ac: AccessCategory,
    wake: Option<Instant>,
    /// Pairs started: (index, normal seq, high seq).
    rounds: VecDeque<(u64, Option<u16>, Option<u16>)>,
    pairs: u64,
    /// Per probe seq: what the medium did with its reply.
    truth: BTreeMap<u16, ReplyTruth>,
    /// Requests and replies on the medium, by the number they were pushed as (a slab with a
    /// free list).
    probes: Vec<Option<ProbeInFlight>>,
    free_probes: Vec<u32>,
}

#[derive(Clone, Copy, Debug, Default)]
struct ReplyTruth {
    /// Frames ahead of the reply in the AP's queue when it was enqueued.
    backlog: Option<u32>,
    queueing: Option<Duration>,
    delay: Option<Duration>,
    rate: Option<Bitrate>,
    /// When the AP had the request.
    request_at: Option<Instant>,
}

/// An echo request or reply on the medium.
#[derive(Clone, Copy, Debug)]
struct ProbeInFlight {
    seq: u16,
    dscp: u8,
    /// The AP has answered: this is the reply.
    reply: bool,
}

impl PingPairAgent {
    /// Flow `i`'s Ping-Pair station (`pp`): the station at the end of its data path's last
    /// Wi-Fi hop, which must come from that station's AP. `media` are the network's media.
    pub(crate) fn build(
        i: usize,
        data: &[Hop],
        (start, stop): (Duration, Instant),
        pp: &PingPairSpec,
        media: &[&WifiLink],
    ) -> Result<PingPairAgent, SimError> {
        let Some((medium, ap, station)) = data.iter().rev().find_map(|h| match *h {
            Hop::Wifi { medium, from, to } => Some((medium, from, to)),
            Hop::Link(_) => None,
        }) else {
            return Err(SimError::Path(
                i,
                "Ping-Pair needs a data path that crosses a Wi-Fi medium to a station".into(),
            ));
        };
        let link = media[medium as usize];
        if link.ap_of(station) != Some(ap) || station == ap {
            return Err(SimError::Path(
                i,
                "Ping-Pair needs the data path's last Wi-Fi hop to go from an AP to \
                 one of its stations"
                    .into(),
            ));
        }
        let first = Instant::ZERO + pp.start.unwrap_or(start).max(start);
        let config = ProberConfig {
            interval: pp.interval,
            tos_normal: pp.tos_normal,
            tos_high: pp.tos_high,
            wmm_runs: 0,
            ..ProberConfig::default()
        };
        Ok(PingPairAgent {
            flow: i as u16,
            stop,
            prober: Prober::new(config, first),
            sample_ac: crate::pingpair::sample_ac(link.map(), link.spec().wmm, pp.tos_normal),
            spec: pp.clone(),
            medium,
            station,
            ap,
            wake: None,
            rounds: VecDeque::new(),
            pairs: 0,
            truth: BTreeMap::new(),
            probes: Vec::new(),
            free_probes: Vec::new(),
        })
    }

    /// Resolves timed-out pairs, sends what is due, asks for its next wake-up (none once the
    /// flow has stopped).
    fn run(&mut self, cx: &mut AgentCx<'_>) {
        let now = cx.now;
        let stopped = now >= self.stop;
        self.prober.on_time(now);
        let mut sends = vec![];
        if !stopped {
            while let Some(probe) = self.prober.poll_transmit(now) {
                match probe.role {
                    Role::Normal => {
                        self.rounds.push_back((self.pairs, Some(probe.seq), None));
                        self.pairs += 1;
                    }
                    Role::High => {
                        if let Some(r) = self.rounds.back_mut() {
                            r.2 = Some(probe.seq);
                        }
                    }
                    _ => {}
                }
                sends.push(probe);
            }
        }
        for probe in sends {
            let slot = ProbeInFlight {
                seq: probe.seq,
                dscp: tos_dscp(probe.tos),
                reply: false,
            };
            let id = match self.free_probes.pop() {
                Some(id) => {
                    self.probes[id as usize] = Some(slot);
                    id
                }
                None => {
                    self.probes.push(Some(slot));
                    (self.probes.len() - 1) as u32
                }
            };
            if !cx.push(self.station, self.ap, slot.dscp, id, PROBE_BYTES) {
                self.probes[id as usize] = None;
                self.free_probes.push(id);
            }
        }
        self.take_pairs(cx);
        let next = if stopped {
            // Resolve the rounds in flight, send no more.
            self.prober
                .poll_timeout()
                .filter(|_| !self.rounds.is_empty())
        } else {
            self.prober.poll_timeout()
        };
        if let Some(t) = next {
            let t = t.max(now + Duration::from_nanos(1));
            if self.wake.is_none_or(|w| t < w) {
                self.wake = Some(t);
                cx.schedule(t, WAKE);
            }
        }
    }

    /// Takes the finished pairs: logs them and hands them to a `skype-ukf`/`kwikr` receiver.
    fn take_pairs(&mut self, cx: &mut AgentCx<'_>) {
        while let Some(e) = self.prober.poll_event() {
            let ProberEvent::Pair(pair) = e else { continue };
            let (normal_seq, high_seq) = match self.rounds.iter().position(|r| r.0 == pair.index) {
                Some(k) => {
                    let (_, n, h) = self.rounds.remove(k).expect("a round");
                    (n, h)
                }
                None => (None, None),
            };
            let normal = normal_seq
                .and_then(|s| self.truth.remove(&s))
                .unwrap_or_default();
            let high = high_seq
                .and_then(|s| self.truth.remove(&s))
                .unwrap_or_default();
            let mut rec = PingRecord {
                flow: self.flow,
                index: pair.index,
                sent: pair.sent,
                high_reply: pair.replies.high,
                normal_reply: pair.replies.normal,
                t_q: pair.t_q.ok(),
                mac_rate: normal.rate,
                n_a: None,
                t_c: None,
                t_c_smoothed: None,
                truth_queueing: normal.queueing,
                truth_delay: normal.delay,
                truth_high_delay: high.delay,
                truth_backlog: normal.backlog,
                normal_request_at_ap: normal.request_at,
                high_request_at_ap: high.request_at,
            };
            if let Some(rate) = normal.rate
                && let Some(u) = cx.receiver.on_ping_pair(pair.replies, rate)
            {
                rec.n_a = Some(u.n_a);
                rec.t_c = Some(u.t_c);
                rec.t_c_smoothed = Some(u.t_c_smoothed);
            }
            cx.log.pings.push(rec);
        }
    }

    /// Samples the AP queue (ground truth), the medium run up to now, and asks for the next
    /// sample.
    fn sample(&mut self, cx: &mut AgentCx<'_>) {
        let Some(every) = self.spec.sample else {
            return;
        };
        if cx.now >= self.stop {
            return;
        }
        let frames = cx
            .medium()
            .medium()
            .station(self.ap as usize)
            .queued(self.sample_ac) as u32;
        cx.log.ap_queue.push(QueueSample {
            flow: self.flow,
            at: cx.now,
            frames,
        });
        cx.schedule(cx.now + every, SAMPLE);
    }
}

impl Agent for PingPairAgent {
    fn medium(&self) -> MediumId {
        MediumId(self.medium)
    }

    fn start(&mut self, cx: &mut AgentCx<'_>) {
        let first = self.prober.poll_timeout().unwrap_or(Instant::ZERO);
        self.wake = Some(first);
        cx.schedule(first, WAKE);
        if self.spec.sample.is_some() {
            cx.schedule(first, SAMPLE);
        }
    }

    fn needs_medium(&self, now: Instant, timer: Timer) -> bool {
        timer == SAMPLE && self.spec.sample.is_some() && now < self.stop
    }

    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<'_>) {
        match timer {
            WAKE if self.wake == Some(cx.now) => {
                self.wake = None;
                self.run(cx);
            }
            SAMPLE => self.sample(cx),
            _ => {}
        }
    }

    /// A probe's fate on the medium: a request the AP has is answered at once (the reply
    /// enters the AP's queue of the same access category), a reply the station has goes to
    /// the prober; a lost one is forgotten (the prober times the pair out).
    fn on_frame(&mut self, id: u32, o: &WifiOutput, cx: &mut AgentCx<'_>) {
        let now = cx.now;
        let Some(mut slot) = self.probes[id as usize].take() else {
            return;
        };
        if !o.delivered {
            self.free_probes.push(id);
            return;
        }
        if !slot.reply {
            slot.reply = true;
            let ac = cx.medium().access_category(slot.dscp);
            if cx.push(self.ap, self.station, slot.dscp, id, PROBE_BYTES) {
                let ahead = cx
                    .medium()
                    .medium()
                    .station(self.ap as usize)
                    .queued(ac)
                    .saturating_sub(1) as u32;
                self.probes[id as usize] = Some(slot);
                let t = self.truth.entry(slot.seq).or_default();
                t.backlog = Some(ahead);
                t.request_at = Some(now);
            } else {
                self.free_probes.push(id);
            }
            return;
        }
        self.free_probes.push(id);
        let r = o.record;
        let t = self.truth.entry(slot.seq).or_default();
        t.queueing = Some(r.queueing);
        t.delay = Some(o.at.saturating_duration_since(r.enqueued));
        t.rate = Some(Bitrate::from_kbps_f64(r.rate.mbps() * 1000.0));
        if self.prober.on_reply(now, slot.seq) {
            self.take_pairs(cx);
        } else {
            self.truth.remove(&slot.seq);
        }
    }
}
