//! Ping-Pair — Das, Baranasuriya, Padmanabhan, Rödbro, Gilbert, "Informed Bandwidth Adaptation
//! in Wi-Fi Networks using Ping-Pair", CoNEXT 2017, §5.
//!
//! Sans-IO: every function takes the arrival times (and sizes) the caller observed; nothing here
//! sends a ping or reads a clock. `wisp-net` drives [`Prober`] over ICMP sockets; the simulator
//! drives it over its Wi-Fi medium (`wisp_sim::pingpair`).
//!
//! What is implemented, by section:
//!
//! * **§5.2 the pair.** A normal-priority echo request (TOS 0x00, AC_BE) is sent, then at once a
//!   high-priority one (TOS 0xb8 by default: EF, AC_VO on RFC 8325 stacks, AC_VI on the older
//!   `UP = TOS >> 5` rule). The pair is *valid* only when the high-priority reply arrives first
//!   ([`measure_pair`]); then the downlink delay is the gap between the two replies,
//!
//!   ```text
//!   T_q = t_rx(normal reply) − t_rx(high reply)
//!   ```
//!
//! * **§5.3 attribution.** n_a = the flow's packets received between the two replies
//!   ("sandwiched", [`Sandwich`]); their delay contribution and the cross traffic's:
//!
//!   ```text
//!   T_a = n_a (s_a / R + t)          T_c = T_q − T_a
//!   ```
//!
//!   with s_a the packet size, R the MAC data rate and t the channel-access delay
//!   ([`attribute`]).
//! * **§5.4 channel-access delay.** Two back-to-back normal-priority pings; the gap between their
//!   replies minus the second reply's transmission time, kept only when the two replies carry
//!   consecutive 802.11 sequence numbers and neither has the retry bit set
//!   ([`ChannelAccessEstimator`]). Without 802.11 headers (any unprivileged client, and the
//!   paper's own Android implementation, §7.3) the fixed t = 0.125 ms is used
//!   ([`DEFAULT_CHANNEL_ACCESS`]).
//! * **§5.5 the WMM check.** A triplet: a large high-priority ping, then two small ones, normal
//!   then intermediate priority; with WMM the small replies tend to come back reversed.
//!   Prioritisation is deemed enabled when the order is reversed in at least 3 of 5 runs
//!   ([`WmmCheck`]).
//! * **§5.6 dual Ping-Pair.** Two pairs sent together; the measurement is discarded when the two
//!   estimates differ by more than 5 ms ([`measure_dual`]; [`ProberConfig::dual`]).
//! * **§8.1 the congestion classifier.** T_q above 5 ms: a *persistent* queue, otherwise
//!   *non-persistent* ([`classify`]). §5.6: the control loop responds only to a sustained signal,
//!   "e.g. 3 consecutive" tests ([`Sustained`]).
//! * **§5.6/Fig. 4 the EWMA.** Skype with Kwikr uses an EWMA-smoothed Ping-Pair estimate
//!   ([`KwikrSignal`], on T_c: the quantity eq. (3) takes).
//!
//! Deviations:
//! * T_c is clamped at zero (a pair whose sandwiched packets explain more than T_q says "no
//!   cross traffic", not a negative delay); eq. (3) squares T_c, so a negative value would
//!   otherwise read as cross traffic.
//! * T_a sums each sandwiched packet's own size (Σ s_i / R + n_a t), which is the paper's
//!   n_a (s_a / R + t) when the sizes are equal.
//! * A dual measurement's T_q is the mean of its two pairs' (the paper does not say which value a
//!   kept dual measurement reports); its sandwich is the mean of the two.
//! * The EWMA's weight is not given in the paper; [`KwikrSignal`] defaults to 0.25 per valid
//!   measurement (a time constant of about 2 s at the paper's two measurements a second).
//! * The channel-access estimate is the mean of the valid samples (the paper reports averages,
//!   Fig. 6–7, and does not say how the estimator combines them).
//! * The intermediate priority of the WMM triplet is TOS 0x80 (CS4: AC_VI under both the RFC 8325
//!   and the `TOS >> 5` mappings); the paper does not give its value.
//! * A pair or triplet with a missing reply is not valid (pair) or counts as not reversed
//!   (triplet). A reply is missing when it has not come [`REPLY_TIMEOUT`] (10 s) after its round
//!   started: the paper gives no timeout (§5.2 asks only that the high-priority reply come
//!   first); 10 s is how long the ping utilities wait for a reply (`MAXWAIT` of BSD ping and
//!   iputils, toybox's `-W` default), the utility the paper's Android build invoked (§7.3).
//!   A shorter timeout drops exactly the pairs of a long queue: a 1000-frame best-effort queue
//!   at 6 Mbit/s holds its normal reply about 2.4 s (docs/kwikr.md, "Part B").

use crate::stats::Ewma;
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};

/// The TOS byte of the normal-priority ping (§5.2: 0x00, best effort).
pub const TOS_NORMAL: u8 = 0x00;
/// The TOS byte of the high-priority ping (§5.2: 0xb8, DSCP EF).
pub const TOS_HIGH: u8 = 0xb8;
/// The TOS byte of the WMM check's intermediate-priority ping (CS4; see the module's deviations).
pub const TOS_INTERMEDIATE: u8 = 0x80;
/// §8.1: the threshold on T_q between a non-persistent and a persistent queue.
pub const CONGESTION_THRESHOLD: Duration = Duration::from_millis(5);
/// §5.6: a dual Ping-Pair whose two estimates differ by more than this is discarded.
pub const DUAL_TOLERANCE: Duration = Duration::from_millis(5);
/// §7.3: the fixed channel-access delay used when 802.11 headers are not available.
pub const DEFAULT_CHANNEL_ACCESS: Duration = Duration::from_micros(125);
/// §5.5: runs of the WMM check, and how many must show a reversal.
pub const WMM_RUNS: usize = 5;
pub const WMM_REVERSALS: usize = 3;
/// §5.6: "e.g. 3 consecutive" tests make a sustained signal.
pub const SUSTAINED_TESTS: u32 = 3;
/// How long a round waits for its replies before a missing one counts as lost (not in the
/// paper: the ping utilities' 10 s, see the module's deviations).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a Ping-Pair measurement was not valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// A reply did not come back.
    Lost,
    /// The high-priority reply did not arrive before the normal-priority one (§5.2).
    NotOvertaken,
    /// The two pairs of a dual Ping-Pair differ by more than [`DUAL_TOLERANCE`] (§5.6).
    DualMismatch,
}

/// The arrival times of one pair's replies (`None`: not received).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PairReplies {
    pub normal: Option<Instant>,
    pub high: Option<Instant>,
}

/// §5.2: T_q of one pair, valid only when the high-priority reply arrived strictly first.
pub fn measure_pair(r: PairReplies) -> Result<Duration, Invalid> {
    let (Some(normal), Some(high)) = (r.normal, r.high) else {
        return Err(Invalid::Lost);
    };
    if high < normal {
        Ok(normal.saturating_duration_since(high))
    } else {
        Err(Invalid::NotOvertaken)
    }
}

/// §5.6: a dual Ping-Pair's T_q (the mean of its two pairs'), discarded when either pair is not
/// valid or the two differ by more than `tolerance` ([`DUAL_TOLERANCE`]).
pub fn measure_dual(
    a: PairReplies,
    b: PairReplies,
    tolerance: Duration,
) -> Result<Duration, Invalid> {
    let qa = measure_pair(a)?;
    let qb = measure_pair(b)?;
    let diff = if qa > qb {
        qa.saturating_sub(qb)
    } else {
        qb.saturating_sub(qa)
    };
    if diff > tolerance {
        return Err(Invalid::DualMismatch);
    }
    Ok(Duration::from_nanos((qa.as_nanos() + qb.as_nanos()) / 2))
}

/// The flow's packets received between the high- and the normal-priority replies (§5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sandwich {
    /// n_a.
    pub packets: u64,
    /// Σ s_i: their sizes (as the MAC layer sends them).
    pub bytes: u64,
}

impl Sandwich {
    /// Counts the packets of `arrivals` (arrival time, size) that arrived strictly after the
    /// high-priority reply and strictly before the normal-priority one.
    pub fn count(
        arrivals: impl IntoIterator<Item = (Instant, DataSize)>,
        high_reply: Instant,
        normal_reply: Instant,
    ) -> Self {
        let mut s = Sandwich::default();
        for (t, size) in arrivals {
            if t > high_reply && t < normal_reply {
                s.add(size);
            }
        }
        s
    }

    /// Adds one sandwiched packet.
    pub fn add(&mut self, size: DataSize) {
        self.packets += 1;
        self.bytes += size.bytes();
    }
}

/// A Ping-Pair measurement attributed to the flow and to cross traffic (§5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attribution {
    /// T_q: the downlink delay.
    pub t_q: Duration,
    /// n_a.
    pub n_a: u64,
    /// T_a = n_a (s_a / R + t): the flow's own contribution.
    pub t_a: Duration,
    /// T_c = max(0, T_q − T_a): the cross traffic's.
    pub t_c: Duration,
}

/// What a receiver took from one Ping-Pair
/// ([`Receiver::on_ping_pair`](crate::controller::Receiver::on_ping_pair)): its own packets
/// between the replies, and the cross traffic's share of the queueing delay, this pair's and
/// smoothed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingPairUse {
    /// n_a: the flow's own packets between the two replies.
    pub n_a: u64,
    /// T_c of this pair.
    pub t_c: Duration,
    /// T_c as the receiver smooths it (eq. 3's input).
    pub t_c_smoothed: Duration,
}

/// §5.3: T_a = Σ_i (s_i / R) + n_a t and T_c = T_q − T_a (clamped at zero).
pub fn attribute(
    t_q: Duration,
    sandwich: Sandwich,
    mac_rate: Bitrate,
    channel_access: Duration,
) -> Attribution {
    let tx = if mac_rate.bps() == 0 {
        Duration::MAX
    } else {
        DataSize::from_bytes(sandwich.bytes).transmit_time(mac_rate)
    };
    let access = Duration::from_nanos(channel_access.as_nanos().saturating_mul(sandwich.packets));
    let t_a = Duration::from_nanos(tx.as_nanos().saturating_add(access.as_nanos()));
    Attribution {
        t_q,
        n_a: sandwich.packets,
        t_a,
        t_c: t_q.saturating_sub(t_a),
    }
}

/// What a client knows about one reply of the channel-access probe (§5.4). The 802.11 fields
/// come from a monitor-mode capture; without them (`None`) the sample cannot be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessReply {
    pub arrival: Instant,
    /// The 802.11 sequence number (12 bits).
    pub seq_80211: Option<u16>,
    /// The 802.11 retry flag.
    pub retry: Option<bool>,
}

/// §5.4: the channel-access delay from back-to-back normal-priority pings, with §7.3's fixed
/// fallback until a valid sample exists.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelAccessEstimator {
    fallback: Duration,
    sum_ns: u128,
    samples: u64,
    rejected: u64,
}

impl Default for ChannelAccessEstimator {
    fn default() -> Self {
        Self::new(DEFAULT_CHANNEL_ACCESS)
    }
}

impl ChannelAccessEstimator {
    pub fn new(fallback: Duration) -> Self {
        ChannelAccessEstimator {
            fallback,
            sum_ns: 0,
            samples: 0,
            rejected: 0,
        }
    }

    /// One probe's two replies, the first sent first, and the second reply's transmission time
    /// (its size over the MAC rate). Returns the sample if it was kept: the two replies carry
    /// consecutive 802.11 sequence numbers (modulo 4096), neither was retried, and the gap is at
    /// least the transmission time.
    pub fn on_probe(
        &mut self,
        first: AccessReply,
        second: AccessReply,
        second_tx_time: Duration,
    ) -> Option<Duration> {
        let consecutive = matches!(
            (first.seq_80211, second.seq_80211),
            (Some(a), Some(b)) if (a.wrapping_add(1) & 0x0fff) == (b & 0x0fff)
        );
        let clean = first.retry == Some(false) && second.retry == Some(false);
        let gap = second.arrival.checked_duration_since(first.arrival);
        match gap {
            Some(gap) if consecutive && clean && gap >= second_tx_time => {
                let t = gap.saturating_sub(second_tx_time);
                self.sum_ns += u128::from(t.as_nanos());
                self.samples += 1;
                Some(t)
            }
            _ => {
                self.rejected += 1;
                None
            }
        }
    }

    /// The mean of the kept samples, or the fallback before the first.
    pub fn value(&self) -> Duration {
        if self.samples == 0 {
            self.fallback
        } else {
            Duration::from_nanos((self.sum_ns / u128::from(self.samples)) as u64)
        }
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    pub fn rejected(&self) -> u64 {
        self.rejected
    }
}

/// The arrival times of one WMM-check triplet's two small replies (§5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TripletReplies {
    /// The small normal-priority ping's reply (sent first of the two).
    pub normal: Option<Instant>,
    /// The small intermediate-priority ping's reply (sent second).
    pub intermediate: Option<Instant>,
}

impl TripletReplies {
    /// The order was reversed: the intermediate-priority reply came strictly first.
    pub fn reversed(&self) -> bool {
        matches!((self.normal, self.intermediate), (Some(n), Some(i)) if i < n)
    }
}

/// §5.5: WMM prioritisation is enabled when at least 3 of 5 triplets come back reversed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct WmmCheck {
    runs: usize,
    reversals: usize,
}

/// The WMM check's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WmmVerdict {
    pub runs: usize,
    pub reversals: usize,
    pub enabled: bool,
}

impl WmmCheck {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one run (ignored once [`WMM_RUNS`] have been recorded).
    pub fn on_run(&mut self, r: TripletReplies) {
        if self.runs < WMM_RUNS {
            self.runs += 1;
            self.reversals += usize::from(r.reversed());
        }
    }

    /// The verdict once all runs are in.
    pub fn verdict(&self) -> Option<WmmVerdict> {
        (self.runs == WMM_RUNS).then_some(WmmVerdict {
            runs: self.runs,
            reversals: self.reversals,
            enabled: self.reversals >= WMM_REVERSALS,
        })
    }
}

/// The state of the AP's downlink queue as Ping-Pair classifies it (§8.1, Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    NonPersistent,
    Persistent,
}

impl Congestion {
    pub fn name(self) -> &'static str {
        match self {
            Congestion::NonPersistent => "non-persistent",
            Congestion::Persistent => "persistent",
        }
    }
}

/// §8.1: T_q above the 5 ms threshold is a persistent queue.
pub fn classify(t_q: Duration) -> Congestion {
    if t_q > CONGESTION_THRESHOLD {
        Congestion::Persistent
    } else {
        Congestion::NonPersistent
    }
}

/// §5.6: a signal the control loop acts on only when it holds for `needed` consecutive tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sustained {
    needed: u32,
    run: u32,
}

impl Default for Sustained {
    fn default() -> Self {
        Self::new(SUSTAINED_TESTS)
    }
}

impl Sustained {
    pub fn new(needed: u32) -> Self {
        Sustained {
            needed: needed.max(1),
            run: 0,
        }
    }
    /// One test's outcome; returns whether the signal is now sustained.
    pub fn on_test(&mut self, positive: bool) -> bool {
        self.run = if positive {
            self.run.saturating_add(1)
        } else {
            0
        };
        self.is_sustained()
    }
    pub fn is_sustained(&self) -> bool {
        self.run >= self.needed
    }
}

/// The smoothed cross-traffic delay Kwikr feeds to its bandwidth estimator (§6 eq. (3), §5.6
/// Fig. 4's EWMA).
#[derive(Clone, Debug, PartialEq)]
pub struct KwikrSignal {
    ewma: Ewma,
}

/// The EWMA weight of a new T_c sample (not given in the paper; see the module's deviations).
pub const DEFAULT_EWMA_WEIGHT: f64 = 0.25;

impl Default for KwikrSignal {
    fn default() -> Self {
        Self::new(DEFAULT_EWMA_WEIGHT)
    }
}

impl KwikrSignal {
    pub fn new(weight: f64) -> Self {
        KwikrSignal {
            ewma: Ewma::new(weight),
        }
    }
    /// A valid measurement's T_c; returns the smoothed value.
    pub fn on_measurement(&mut self, t_c: Duration) -> Duration {
        Duration::from_millis_f64(self.ewma.update(t_c.as_millis_f64()))
    }
    /// The smoothed T_c (zero before any measurement).
    pub fn t_c(&self) -> Duration {
        self.ewma
            .value()
            .map_or(Duration::ZERO, Duration::from_millis_f64)
    }
}

/// The role of one probe in a [`Prober`] round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A pair's normal-priority ping.
    Normal,
    /// A pair's high-priority ping.
    High,
    /// The second pair's normal-priority ping of a dual Ping-Pair (§5.6).
    Normal2,
    /// The second pair's high-priority ping of a dual Ping-Pair.
    High2,
    /// The WMM triplet's large high-priority ping.
    TripletLarge,
    /// The WMM triplet's small normal-priority ping.
    TripletNormal,
    /// The WMM triplet's small intermediate-priority ping.
    TripletIntermediate,
}

/// One echo request to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The ICMP sequence number (unique among outstanding probes).
    pub seq: u16,
    pub tos: u8,
    /// The echo payload length, bytes.
    pub payload: usize,
    pub role: Role,
}

/// The [`Prober`]'s settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ProberConfig {
    /// Time between pair rounds (200 ms for validation, §8.1; 500 ms in Kwikr, §6).
    pub interval: Duration,
    /// Pair rounds to run (`None`: until stopped).
    pub count: Option<u64>,
    pub tos_normal: u8,
    pub tos_high: u8,
    pub tos_intermediate: u8,
    /// Payload of a pair's pings and of the triplet's small pings.
    pub small_payload: usize,
    /// Payload of the triplet's large ping.
    pub large_payload: usize,
    /// WMM-check triplets run before the pairs (0 to skip the check).
    pub wmm_runs: usize,
    /// Time between triplets.
    pub triplet_spacing: Duration,
    /// A reply later than this after its round started counts as lost ([`REPLY_TIMEOUT`]).
    pub reply_timeout: Duration,
    /// Dual Ping-Pair (§5.6): each round sends two pairs at once and keeps the measurement only
    /// when they agree within [`DUAL_TOLERANCE`].
    pub dual: bool,
}

impl Default for ProberConfig {
    fn default() -> Self {
        ProberConfig {
            interval: Duration::from_millis(200),
            count: None,
            tos_normal: TOS_NORMAL,
            tos_high: TOS_HIGH,
            tos_intermediate: TOS_INTERMEDIATE,
            small_payload: 56,
            large_payload: 1400,
            wmm_runs: WMM_RUNS,
            triplet_spacing: Duration::from_millis(50),
            reply_timeout: REPLY_TIMEOUT,
            dual: false,
        }
    }
}

/// A finished pair round (for a dual round, `replies` are the first pair's and `t_q` the dual
/// measurement's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairResult {
    /// The round's index (0-based).
    pub index: u64,
    pub sent: Instant,
    pub replies: PairReplies,
    pub t_q: Result<Duration, Invalid>,
}

/// What a [`Prober`] reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProberEvent {
    Pair(PairResult),
    Triplet(TripletReplies),
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    seq: u16,
    role: Role,
    arrival: Option<Instant>,
}

#[derive(Clone, Debug)]
struct Round {
    started: Instant,
    index: u64,
    triplet: bool,
    probes: Vec<Outstanding>,
}

/// A sans-IO Ping-Pair prober: WMM-check triplets, then a pair every interval. The caller sends
/// each [`Probe`] `poll_transmit` returns (in order, back to back), reports replies with
/// [`Prober::on_reply`], and collects results with [`Prober::poll_event`].
#[derive(Clone, Debug)]
pub struct Prober {
    config: ProberConfig,
    next_seq: u16,
    triplets_sent: usize,
    pairs_sent: u64,
    next_round: Instant,
    to_send: Vec<Probe>,
    rounds: Vec<Round>,
    events: std::collections::VecDeque<ProberEvent>,
    /// Replies that matched no outstanding probe (late, duplicate or foreign).
    pub unmatched: u64,
}

impl Prober {
    pub fn new(config: ProberConfig, now: Instant) -> Self {
        Prober {
            config,
            next_seq: 0,
            triplets_sent: 0,
            pairs_sent: 0,
            next_round: now,
            to_send: vec![],
            rounds: vec![],
            events: Default::default(),
            unmatched: 0,
        }
    }

    pub fn config(&self) -> &ProberConfig {
        &self.config
    }

    fn probe(&mut self, tos: u8, payload: usize, role: Role) -> Probe {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        Probe {
            seq,
            tos,
            payload,
            role,
        }
    }

    fn pairs_done(&self) -> bool {
        self.config.count.is_some_and(|c| self.pairs_sent >= c)
    }

    /// Whether every round has been sent and resolved.
    pub fn is_finished(&self) -> bool {
        self.triplets_sent >= self.config.wmm_runs
            && self.pairs_done()
            && self.rounds.is_empty()
            && self.to_send.is_empty()
    }

    /// The next probe to send now, if any. Starts a round when its time has come.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Probe> {
        if self.to_send.is_empty() && now >= self.next_round {
            let c = self.config.clone();
            let (probes, triplet, index) = if self.triplets_sent < c.wmm_runs {
                self.triplets_sent += 1;
                self.next_round = now.saturating_add(c.triplet_spacing);
                let p = vec![
                    self.probe(c.tos_high, c.large_payload, Role::TripletLarge),
                    self.probe(c.tos_normal, c.small_payload, Role::TripletNormal),
                    self.probe(
                        c.tos_intermediate,
                        c.small_payload,
                        Role::TripletIntermediate,
                    ),
                ];
                (p, true, self.triplets_sent as u64 - 1)
            } else if !self.pairs_done() {
                self.pairs_sent += 1;
                self.next_round = now.saturating_add(c.interval);
                // §5.2: the normal-priority ping first, the high-priority one at once after;
                // §5.6: a dual round sends a second pair right behind.
                let mut p = vec![
                    self.probe(c.tos_normal, c.small_payload, Role::Normal),
                    self.probe(c.tos_high, c.small_payload, Role::High),
                ];
                if c.dual {
                    p.push(self.probe(c.tos_normal, c.small_payload, Role::Normal2));
                    p.push(self.probe(c.tos_high, c.small_payload, Role::High2));
                }
                (p, false, self.pairs_sent - 1)
            } else {
                (vec![], false, 0)
            };
            if !probes.is_empty() {
                self.rounds.push(Round {
                    started: now,
                    index,
                    triplet,
                    probes: probes
                        .iter()
                        .map(|p| Outstanding {
                            seq: p.seq,
                            role: p.role,
                            arrival: None,
                        })
                        .collect(),
                });
                // Sent in order: keep them reversed to pop from the end.
                self.to_send = probes.into_iter().rev().collect();
            }
        }
        self.to_send.pop()
    }

    /// An echo reply with ICMP sequence `seq` arrived at `now` (the kernel's receive time).
    /// Returns whether it matched an outstanding probe.
    pub fn on_reply(&mut self, now: Instant, seq: u16) -> bool {
        for r in &mut self.rounds {
            if let Some(p) = r.probes.iter_mut().find(|p| p.seq == seq) {
                if p.arrival.is_none() {
                    p.arrival = Some(now);
                    self.resolve(now);
                    return true;
                }
                break;
            }
        }
        self.unmatched += 1;
        false
    }

    /// Resolves rounds whose replies are all in or whose time is up.
    pub fn on_time(&mut self, now: Instant) {
        self.resolve(now);
    }

    fn resolve(&mut self, now: Instant) {
        let timeout = self.config.reply_timeout;
        let mut i = 0;
        while i < self.rounds.len() {
            let r = &self.rounds[i];
            let complete = r.probes.iter().all(|p| p.arrival.is_some());
            if complete || now >= r.started.saturating_add(timeout) {
                let r = self.rounds.remove(i);
                let at = |role| {
                    r.probes
                        .iter()
                        .find(|p| p.role == role)
                        .and_then(|p| p.arrival)
                };
                let event = if r.triplet {
                    ProberEvent::Triplet(TripletReplies {
                        normal: at(Role::TripletNormal),
                        intermediate: at(Role::TripletIntermediate),
                    })
                } else {
                    let replies = PairReplies {
                        normal: at(Role::Normal),
                        high: at(Role::High),
                    };
                    let t_q = if self.config.dual {
                        let second = PairReplies {
                            normal: at(Role::Normal2),
                            high: at(Role::High2),
                        };
                        measure_dual(replies, second, DUAL_TOLERANCE)
                    } else {
                        measure_pair(replies)
                    };
                    ProberEvent::Pair(PairResult {
                        index: r.index,
                        sent: r.started,
                        replies,
                        t_q,
                    })
                };
                self.events.push_back(event);
            } else {
                i += 1;
            }
        }
    }

    pub fn poll_event(&mut self) -> Option<ProberEvent> {
        self.events.pop_front()
    }

    /// When the prober next needs attention: the next round, or the oldest round's timeout.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let next_round = (!(self.triplets_sent >= self.config.wmm_runs && self.pairs_done()))
            .then_some(self.next_round);
        let oldest = self
            .rounds
            .iter()
            .map(|r| r.started.saturating_add(self.config.reply_timeout))
            .min();
        match (next_round, oldest) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: u64) -> Instant {
        Instant::from_micros(us)
    }
    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// §5.2, Fig. 3(a): the AP's BE queue holds cross traffic and the flow's packets; the
    /// high-priority reply jumps it, the normal one waits behind everything.
    #[test]
    fn a_valid_pair_measures_the_gap_between_the_replies() {
        // Replies: high at 10.000 ms, normal at 23.5 ms → T_q = 13.5 ms.
        let r = PairReplies {
            high: Some(t(10_000)),
            normal: Some(t(23_500)),
        };
        assert_eq!(measure_pair(r), Ok(us(13_500)));
        // The normal reply first (no WMM, or an empty queue): not valid.
        let r2 = PairReplies {
            high: Some(t(10_100)),
            normal: Some(t(10_000)),
        };
        assert_eq!(measure_pair(r2), Err(Invalid::NotOvertaken));
        let same = PairReplies {
            high: Some(t(10_000)),
            normal: Some(t(10_000)),
        };
        assert_eq!(measure_pair(same), Err(Invalid::NotOvertaken));
        assert_eq!(
            measure_pair(PairReplies {
                high: Some(t(1)),
                normal: None
            }),
            Err(Invalid::Lost)
        );
    }

    /// §5.3 by hand: 3 sandwiched packets of 1200 B at R = 24 Mbit/s (400 µs each) with
    /// t = 125 µs: T_a = 3 × 525 µs = 1.575 ms; T_q = 10 ms → T_c = 8.425 ms.
    #[test]
    fn attribution_follows_eq_t_a_and_t_c() {
        let arrivals = [
            (t(9_000), DataSize::from_bytes(1200)), // before the high reply: not counted
            (t(10_000), DataSize::from_bytes(1200)), // at the high reply: not strictly between
            (t(11_000), DataSize::from_bytes(1200)),
            (t(14_000), DataSize::from_bytes(1200)),
            (t(19_999), DataSize::from_bytes(1200)),
            (t(20_000), DataSize::from_bytes(1200)), // with the normal reply: not counted
        ];
        let s = Sandwich::count(arrivals, t(10_000), t(20_000));
        assert_eq!(
            s,
            Sandwich {
                packets: 3,
                bytes: 3600
            }
        );
        let a = attribute(
            us(10_000),
            s,
            Bitrate::from_mbps(24),
            DEFAULT_CHANNEL_ACCESS,
        );
        assert_eq!(a.n_a, 3);
        assert_eq!(a.t_a, us(1_575));
        assert_eq!(a.t_c, us(8_425));
        // Self-congestion: 30 such packets explain more than T_q → T_c = 0, not negative.
        let many = Sandwich {
            packets: 30,
            bytes: 36_000,
        };
        let b = attribute(
            us(10_000),
            many,
            Bitrate::from_mbps(24),
            DEFAULT_CHANNEL_ACCESS,
        );
        assert_eq!(b.t_a, us(15_750));
        assert_eq!(b.t_c, Duration::ZERO);
    }

    /// §5.6: the dual measurement keeps pairs that agree within 5 ms and discards others.
    #[test]
    fn dual_ping_pair_discards_estimates_more_than_5_ms_apart() {
        let pair = |h: u64, n: u64| PairReplies {
            high: Some(t(h)),
            normal: Some(t(n)),
        };
        // 12 ms and 16 ms: kept, mean 14 ms.
        assert_eq!(
            measure_dual(pair(1_000, 13_000), pair(1_100, 17_100), DUAL_TOLERANCE),
            Ok(us(14_000))
        );
        // Exactly 5 ms apart: kept (the paper discards "more than 5 ms").
        assert_eq!(
            measure_dual(pair(0, 10_000), pair(0, 15_000), DUAL_TOLERANCE),
            Ok(us(12_500))
        );
        // A retransmitted normal reply inflates one pair: 12 ms vs 112 ms → discarded.
        assert_eq!(
            measure_dual(pair(1_000, 13_000), pair(1_100, 113_100), DUAL_TOLERANCE),
            Err(Invalid::DualMismatch)
        );
        // Either pair invalid → the dual is.
        assert_eq!(
            measure_dual(pair(1_000, 13_000), pair(5_000, 4_000), DUAL_TOLERANCE),
            Err(Invalid::NotOvertaken)
        );
    }

    /// §5.4: gap − transmission time of the second reply, only for consecutive 802.11
    /// sequence numbers without the retry bit; 0.125 ms until then.
    #[test]
    fn channel_access_estimator_filters_and_falls_back() {
        let mut e = ChannelAccessEstimator::default();
        assert_eq!(e.value(), us(125));
        let reply = |at: u64, seq: Option<u16>, retry: Option<bool>| AccessReply {
            arrival: t(at),
            seq_80211: seq,
            retry,
        };
        // A 98-byte reply at 24 Mbit/s: 32.667 µs; say the caller computed 33 µs.
        let tx = us(33);
        // Gap 333 µs → 300 µs.
        assert_eq!(
            e.on_probe(
                reply(0, Some(7), Some(false)),
                reply(333, Some(8), Some(false)),
                tx
            ),
            Some(us(300))
        );
        // Sequence numbers wrap at 4096: 4095 → 0 is consecutive. Gap 133 µs → 100 µs.
        assert_eq!(
            e.on_probe(
                reply(0, Some(4095), Some(false)),
                reply(133, Some(0), Some(false)),
                tx
            ),
            Some(us(100))
        );
        // Not consecutive, retried, unknown, or a gap shorter than the frame: rejected.
        assert_eq!(
            e.on_probe(
                reply(0, Some(7), Some(false)),
                reply(999, Some(9), Some(false)),
                tx
            ),
            None
        );
        assert_eq!(
            e.on_probe(
                reply(0, Some(7), Some(true)),
                reply(999, Some(8), Some(false)),
                tx
            ),
            None
        );
        assert_eq!(
            e.on_probe(reply(0, None, None), reply(999, None, None), tx),
            None
        );
        assert_eq!(
            e.on_probe(
                reply(0, Some(1), Some(false)),
                reply(10, Some(2), Some(false)),
                tx
            ),
            None
        );
        assert_eq!((e.samples(), e.rejected()), (2, 4));
        // Mean of 300 and 100 µs.
        assert_eq!(e.value(), us(200));
    }

    /// §5.5: reversal in at least 3 of 5 runs.
    #[test]
    fn wmm_check_needs_three_reversals_of_five() {
        let rev = TripletReplies {
            normal: Some(t(500)),
            intermediate: Some(t(400)),
        };
        let fifo = TripletReplies {
            normal: Some(t(400)),
            intermediate: Some(t(500)),
        };
        let lost = TripletReplies {
            normal: None,
            intermediate: Some(t(400)),
        };
        assert!(rev.reversed() && !fifo.reversed() && !lost.reversed());
        let mut w = WmmCheck::new();
        for r in [rev, fifo, rev, lost] {
            w.on_run(r);
        }
        assert_eq!(w.verdict(), None, "four runs are not enough");
        w.on_run(rev);
        assert_eq!(
            w.verdict(),
            Some(WmmVerdict {
                runs: 5,
                reversals: 3,
                enabled: true
            })
        );
        let mut off = WmmCheck::new();
        for r in [rev, rev, fifo, fifo, lost, rev] {
            off.on_run(r);
        }
        // The sixth run is ignored: 2 of 5.
        assert_eq!(
            off.verdict().map(|v| (v.reversals, v.enabled)),
            Some((2, false))
        );
    }

    #[test]
    fn classifier_threshold_is_5_ms_and_sustained_needs_three_in_a_row() {
        assert_eq!(classify(us(5_000)), Congestion::NonPersistent);
        assert_eq!(classify(us(5_001)), Congestion::Persistent);
        assert_eq!(classify(Duration::ZERO), Congestion::NonPersistent);
        let mut s = Sustained::default();
        assert!(!s.on_test(true));
        assert!(!s.on_test(true));
        assert!(!s.on_test(false));
        assert!(!s.on_test(true));
        assert!(!s.on_test(true));
        assert!(s.on_test(true));
        assert!(s.on_test(true));
        assert!(!s.on_test(false));
    }

    #[test]
    fn kwikr_signal_is_an_ewma_of_t_c() {
        let mut k = KwikrSignal::new(0.25);
        assert_eq!(k.t_c(), Duration::ZERO);
        // First sample initialises: 8 ms; then 0 → 8 − 0.25·8 = 6 ms; then 10 → 6 + 1 = 7 ms.
        assert_eq!(k.on_measurement(us(8_000)), us(8_000));
        assert_eq!(k.on_measurement(Duration::ZERO), us(6_000));
        assert_eq!(k.on_measurement(us(10_000)), us(7_000));
        assert_eq!(k.t_c(), us(7_000));
    }

    /// A dual round: four probes N, H, N, H; the measurement is kept when the two pairs agree
    /// within 5 ms (mean of the two) and discarded when one is inflated.
    #[test]
    fn prober_dual_rounds_apply_the_5_ms_filter() {
        let config = ProberConfig {
            count: Some(2),
            wmm_runs: 0,
            dual: true,
            ..ProberConfig::default()
        };
        let mut p = Prober::new(config, Instant::ZERO);
        let mut results = vec![];
        for (round, second_normal_us) in [(0u64, 12_000u64), (1, 30_000)] {
            let now = Instant::from_millis(200 * round);
            let sent: Vec<Probe> = std::iter::from_fn(|| p.poll_transmit(now)).collect();
            assert_eq!(
                sent.iter().map(|s| s.role).collect::<Vec<_>>(),
                [Role::Normal, Role::High, Role::Normal2, Role::High2]
            );
            // Highs at +1 ms and +1.1 ms; first normal at +11 ms (T_q 10 ms); second normal
            // at +12 ms (T_q 10.9 ms) or +30 ms (28.9 ms: a retransmission).
            p.on_reply(now + us(1_000), sent[1].seq);
            p.on_reply(now + us(1_100), sent[3].seq);
            p.on_reply(now + us(11_000), sent[0].seq);
            p.on_reply(now + us(second_normal_us), sent[2].seq);
            while let Some(ProberEvent::Pair(r)) = p.poll_event() {
                results.push(r.t_q);
            }
        }
        assert_eq!(results, [Ok(us(10_450)), Err(Invalid::DualMismatch)]);
        assert!(p.is_finished());
    }

    /// The prober on a synthetic timeline: 5 triplets, then pairs every 200 ms; the normal ping
    /// leaves first; replies resolve rounds; a missing reply times out as lost.
    #[test]
    fn prober_runs_triplets_then_pairs() {
        let config = ProberConfig {
            count: Some(2),
            ..ProberConfig::default()
        };
        let mut p = Prober::new(config, Instant::ZERO);
        let mut now = Instant::ZERO;
        let mut triplets = 0;
        let mut pairs = vec![];
        let mut guard = 0;
        while !p.is_finished() {
            guard += 1;
            assert!(guard < 100, "the prober must finish");
            let mut sent = vec![];
            while let Some(probe) = p.poll_transmit(now) {
                sent.push(probe);
            }
            match sent.len() {
                3 => {
                    assert_eq!(
                        sent.iter().map(|s| (s.role, s.tos)).collect::<Vec<_>>(),
                        [
                            (Role::TripletLarge, 0xb8),
                            (Role::TripletNormal, 0x00),
                            (Role::TripletIntermediate, 0x80)
                        ]
                    );
                    assert_eq!(sent[0].payload, 1400);
                    // A WMM AP: the intermediate reply overtakes the normal one.
                    p.on_reply(now + us(100), sent[0].seq);
                    p.on_reply(now + us(200), sent[2].seq);
                    p.on_reply(now + us(300), sent[1].seq);
                }
                2 => {
                    assert_eq!((sent[0].role, sent[0].tos), (Role::Normal, 0x00));
                    assert_eq!((sent[1].role, sent[1].tos), (Role::High, 0xb8));
                    if pairs.is_empty() {
                        // High at +1 ms, normal at +9 ms.
                        p.on_reply(now + us(1_000), sent[1].seq);
                        p.on_reply(now + us(9_000), sent[0].seq);
                        // A duplicate and a foreign reply are counted, not matched.
                        assert!(!p.on_reply(now + us(9_100), sent[0].seq));
                        assert!(!p.on_reply(now + us(9_200), 60_000));
                    } else {
                        // The normal reply never comes.
                        p.on_reply(now + us(1_000), sent[1].seq);
                    }
                }
                0 => {}
                n => panic!("{n} probes at once"),
            }
            while let Some(e) = p.poll_event() {
                match e {
                    ProberEvent::Triplet(r) => {
                        assert!(r.reversed());
                        triplets += 1;
                    }
                    ProberEvent::Pair(r) => pairs.push(r),
                }
            }
            now = p.poll_timeout().unwrap_or(now + us(1));
            p.on_time(now);
            while let Some(e) = p.poll_event() {
                if let ProberEvent::Pair(r) = e {
                    pairs.push(r);
                }
            }
        }
        assert_eq!(triplets, 5);
        assert_eq!(pairs.len(), 2);
        assert_eq!(pairs[0].t_q, Ok(us(8_000)));
        assert_eq!(pairs[1].t_q, Err(Invalid::Lost));
        assert_eq!(p.unmatched, 2);
        // Triplets 50 ms apart, then the first pair; pairs 200 ms apart.
        assert_eq!(pairs[0].sent, Instant::from_millis(250));
        assert_eq!(pairs[1].sent, Instant::from_millis(450));
    }
}
