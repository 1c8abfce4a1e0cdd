//! WBest — Li, Claypool, Kinicki, "WBest: a Bandwidth Estimation Tool for Multimedia Streaming
//! Application over IEEE 802.11 Wireless Networks" (LCN 2008), Algorithm 1; and WBest+'s
//! burst form for links that aggregate frames (Farshad et al., SECON 2014).
//!
//! Two steps, sans-IO (the caller sends what [`Wbest::poll_transmit`] hands out, reports
//! arrivals with [`Wbest::on_probe_received`] and wakes it at [`Wbest::poll_timeout`]):
//!
//! 1. **Effective capacity** (Alg. 1 lines 1–2, eq. 3): `n` packet pairs of `L` bytes, the two
//!    packets of a pair back to back, pairs `pair_gap` (10 ms) apart. Per pair that survived,
//!    `C_i = L / T_i` (`T_i` = the arrival gap of its two packets); `C_e = median(C_i)`.
//! 2. **Available bandwidth** (lines 3–13, eq. 6): a train of `m` packets sent at rate `C_e`
//!    (gap `L / C_e`). `R = L / mean(T_k)` over the gaps `T_k` between consecutive train
//!    packets that both arrived; `A = C_e (2 − C_e / R)` if `R ≥ C_e / 2`, else `A = 0`; with
//!    the train's loss rate `p > 0`, `A ← A (1 − p)`.
//!
//! Compressed gaps (§II-E, "last hop compression"): the train may not arrive faster than it
//! was sent; the wireless link is the last hop, so nothing after it can compress the train.
//! WBest's code applies this to each gap (`T_k ← max(T_k, s_k)`); wisp applies it to each run
//! of consecutive gaps (the run's arrival span is raised to its sending span), and leaves out
//! the gaps the sender itself stretched ([`train_estimate`]).
//!
//! Defaults (§III): `n = 30`, `m = 30`, `L = 1500` bytes, pairs 10 ms apart. A phase ends when
//! every packet of it has arrived, or `phase_timeout` (300 ms, WBest's receive timeout) after
//! the latest of its last send and its last arrival; the train starts as soon as the pair phase
//! ends. The result reports `C_e`, `A`, `R`, the train's loss rate, bytes sent and the time
//! from the first probe to the result.
//!
//! WBest+ ([`WbestConfig::wbest_plus`]): pairs go out in bursts of `burst` pairs (2·burst
//! packets back to back), bursts `pair_gap` apart; pair `j` is packets `2j` and `2j + 1` of its
//! burst. Defaults 165 pairs in bursts of 33, a train of 100. WBest is `burst = 1`.
//!
//! Deviations:
//! - The median is the ordinary one (mean of the two middle values for an even count); WBest
//!   1.0's code averages `c[k/2]` and `c[k/2+1]`, an off-by-one.
//! - No control-channel round trips are modelled between the phases: the train starts at the
//!   instant the pair phase ends (a real tool adds its control exchange to the time).
//! - A pair whose two arrivals carry the same timestamp (`T_i = 0`) is skipped, as the code
//!   skips `C_i ≤ 0`.
//! - Compression is checked per run of consecutive gaps, not per gap. A host that stamps one
//!   arrival late and the next ones at once (the paper's "high CPU load at the wireless
//!   clients") stretches one gap and compresses the following ones; raising each compressed gap
//!   to its sending gap keeps the stretch too and counts the delay twice. On a real 12 Mbit/s
//!   link this put A at 11.1 where every other estimate was 11.9–12.0. In the simulator, where
//!   time stamps are exact, an 802.11 frame delayed by backoff does the same to the frames
//!   queued behind it, so the change moves the reproduction's figures (docs/wbest.md gives both).
//! - The sending span that bounds a run is at least the schedule's (`g` per gap): a sender
//!   catching up after a delay sends a few packets back to back, and a host that then stamps
//!   them together would otherwise give a run faster than `C_e`. The simulator's sender keeps
//!   the schedule, so there this is the paper's rule.
//! - A gap whose second packet left more than `max(g/2, 50 µs)` past its sending gap `g` (the
//!   sender was descheduled) is left out of `R` and splits the run, as pathload and pathChirp
//!   set aside streams a sender context switch disturbed; the train then measures the link, not
//!   the sender's scheduling. Only when at least half the gaps remain; the count is reported
//!   ([`WbestResult::gaps_sender_late`]). The simulator's sender is never late.
//! - When `R > C_e` (only possible if the train left faster than `C_e`), eq. 6 gives `A > C_e`;
//!   it is reported as computed (the code returns `R` then; the paper states eq. 6 alone).

use crate::time::{Duration, Instant};
use crate::units::Bitrate;

/// The parameters of one WBest estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WbestConfig {
    /// Packet pairs `n` (1–1000).
    pub pairs: u32,
    /// Packets `m` in the train (2–1000).
    pub train: u32,
    /// Probe size `L` in bytes (IP packet, 64–65535).
    pub size: u32,
    /// Between the starts of consecutive pairs (WBest) or bursts (WBest+).
    pub pair_gap: Duration,
    /// Pairs sent back to back in one burst (1 = WBest).
    pub burst: u32,
    /// A phase ends this long after its last send or arrival, whichever is later.
    pub phase_timeout: Duration,
}

impl Default for WbestConfig {
    /// The paper's: 30 pairs of 1500 bytes 10 ms apart, a train of 30.
    fn default() -> Self {
        WbestConfig {
            pairs: 30,
            train: 30,
            size: 1500,
            pair_gap: Duration::from_millis(10),
            burst: 1,
            phase_timeout: Duration::from_millis(300),
        }
    }
}

/// A parameter out of range: which one and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("wbest `{key}`: {message}")]
pub struct WbestConfigError {
    pub key: &'static str,
    pub message: String,
}

impl WbestConfig {
    /// WBest+'s defaults: 165 pairs in bursts of 33, bursts 10 ms apart, a train of 100.
    pub fn wbest_plus() -> Self {
        WbestConfig {
            pairs: 165,
            train: 100,
            burst: 33,
            ..WbestConfig::default()
        }
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), WbestConfigError> {
        let bad = |key, message: String| Err(WbestConfigError { key, message });
        if !(1..=1000).contains(&self.pairs) {
            return bad("pairs", format!("must be 1 to 1000, not {}", self.pairs));
        }
        if !(2..=1000).contains(&self.train) {
            return bad("train", format!("must be 2 to 1000, not {}", self.train));
        }
        if !(64..=65535).contains(&self.size) {
            return bad(
                "size",
                format!("must be 64 to 65535 bytes, not {}", self.size),
            );
        }
        if self.burst == 0 || self.burst > self.pairs {
            return bad(
                "burst",
                format!("must be 1 to pairs ({}), not {}", self.pairs, self.burst),
            );
        }
        if self.pair_gap > Duration::from_secs(10) {
            return bad("pair_gap", "must be at most 10 s".into());
        }
        if self.phase_timeout.is_zero() || self.phase_timeout > Duration::from_secs(60) {
            return bad("phase_timeout", "must be above 0 and at most 60 s".into());
        }
        Ok(())
    }

    /// Bytes one estimate sends: `2n + m` probes of `L` bytes.
    pub fn bytes(&self) -> u64 {
        (2 * u64::from(self.pairs) + u64::from(self.train)) * u64::from(self.size)
    }
}

/// Which step a probe belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WbestPhase {
    /// Step 1: packet pairs (effective capacity).
    Pairs,
    /// Step 2: the packet train (available bandwidth).
    Train,
}

/// A probe to send now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub phase: WbestPhase,
    /// Index within the phase: pairs `0..2n` (pair `i` is `2i`, `2i + 1`), train `0..m`.
    pub index: u32,
    /// Bytes (the IP packet).
    pub bytes: u32,
    /// When it was due (the schedule, not when the caller polled).
    pub due: Instant,
}

/// One estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WbestResult {
    /// `C_e`, eq. 3.
    pub capacity: Bitrate,
    /// `A`, eq. 6 with the loss correction.
    pub available: Bitrate,
    /// `R`, the train's mean dispersion rate (achievable throughput); zero with no valid gap.
    pub achievable: Bitrate,
    /// Pairs that gave a `C_i`.
    pub pairs_used: u32,
    /// Train gaps used for `R`.
    pub gaps_used: u32,
    /// Train gaps raised to their sending gap (compression rule, per run of gaps).
    pub gaps_compressed: u32,
    /// Train gaps left out of `R` because the sender sent their second packet late.
    pub gaps_sender_late: u32,
    /// The train's loss rate `p`.
    pub train_loss: f64,
    /// Bytes sent (every probe handed out).
    pub bytes_sent: u64,
    /// From the first probe's due time to the result.
    pub time: Duration,
}

/// Why no estimate came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WbestFailure {
    #[error("no packet pair arrived whole (no C_e)")]
    NoPairs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Pairs,
    Train,
    Done,
}

/// The WBest state machine (sender and receiver records in one; see the module doc).
#[derive(Debug)]
pub struct Wbest {
    cfg: WbestConfig,
    state: State,
    /// Start of the current phase's schedule.
    phase_start: Instant,
    first: Instant,
    /// Next index to send in the current phase.
    next: u32,
    /// Send instants of the current phase (`due` times, or the caller's actual ones).
    sent: Vec<Option<Instant>>,
    arrived: Vec<Option<Instant>>,
    arrivals: u32,
    last_activity: Instant,
    train_gap: Duration,
    capacity: f64,
    pairs_used: u32,
    bytes_sent: u64,
    outcome: Option<Result<WbestResult, WbestFailure>>,
}

impl Wbest {
    /// An estimate whose first probe is due at `start`.
    pub fn new(cfg: WbestConfig, start: Instant) -> Result<Self, WbestConfigError> {
        cfg.validate()?;
        let n = (2 * cfg.pairs) as usize;
        Ok(Wbest {
            cfg,
            state: State::Pairs,
            phase_start: start,
            first: start,
            next: 0,
            sent: vec![None; n],
            arrived: vec![None; n],
            arrivals: 0,
            last_activity: start,
            train_gap: Duration::ZERO,
            capacity: 0.0,
            pairs_used: 0,
            bytes_sent: 0,
            outcome: None,
        })
    }

    pub fn config(&self) -> &WbestConfig {
        &self.cfg
    }

    /// The phase in progress (`None` once done).
    pub fn phase(&self) -> Option<WbestPhase> {
        match self.state {
            State::Pairs => Some(WbestPhase::Pairs),
            State::Train => Some(WbestPhase::Train),
            State::Done => None,
        }
    }

    fn phase_len(&self) -> u32 {
        match self.state {
            State::Pairs => 2 * self.cfg.pairs,
            State::Train => self.cfg.train,
            State::Done => 0,
        }
    }

    /// When probe `index` of the current phase is due.
    fn due(&self, index: u32) -> Instant {
        match self.state {
            State::Pairs => {
                let burst = index / (2 * self.cfg.burst);
                self.phase_start + self.cfg.pair_gap * u64::from(burst)
            }
            State::Train => self.phase_start + self.train_gap * u64::from(index),
            State::Done => Instant::MAX,
        }
    }

    /// The next probe due at or before `now`, if any; the caller sends it at once (and may
    /// report the actual send instant with [`Wbest::on_probe_sent`]).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Probe> {
        if self.state == State::Done || self.next >= self.phase_len() {
            return None;
        }
        let due = self.due(self.next);
        if due > now {
            return None;
        }
        let phase = self.phase().expect("not done");
        let index = self.next;
        self.sent[index as usize] = Some(due);
        self.next += 1;
        self.bytes_sent += u64::from(self.cfg.size);
        self.last_activity = self.last_activity.max(due);
        Some(Probe {
            phase,
            index,
            bytes: self.cfg.size,
            due,
        })
    }

    /// The actual send instant of a probe (a real sender's clock); the sending gaps of the
    /// compression rule use these.
    pub fn on_probe_sent(&mut self, phase: WbestPhase, index: u32, at: Instant) {
        if self.phase() != Some(phase) {
            return;
        }
        if let Some(s) = self.sent.get_mut(index as usize).filter(|s| s.is_some()) {
            *s = Some(at);
        }
    }

    /// Every probe of the current phase has been handed out (or the estimate is done).
    pub fn phase_sent(&self) -> bool {
        self.next >= self.phase_len()
    }

    /// When to call [`Wbest::poll_transmit`] or [`Wbest::on_timeout`] next (`None`: done).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Done => None,
            _ if self.next < self.phase_len() => Some(self.due(self.next)),
            _ => Some(self.last_activity + self.cfg.phase_timeout),
        }
    }

    /// Probe `index` of `phase` arrived at `at` (the receiver's clock; only the differences
    /// between arrivals matter). Duplicates, unknown probes and probes of a finished phase are
    /// ignored.
    pub fn on_probe_received(&mut self, at: Instant, phase: WbestPhase, index: u32) {
        if self.phase() != Some(phase) {
            return;
        }
        let i = index as usize;
        if i >= self.arrived.len() || self.arrived[i].is_some() || self.sent[i].is_none() {
            return;
        }
        self.arrived[i] = Some(at);
        self.arrivals += 1;
        self.last_activity = self.last_activity.max(at);
        if self.next == self.phase_len() && self.arrivals == self.phase_len() {
            self.end_phase(at);
        }
    }

    /// The receiver has reported every arrival of the phase it will report (a real run's
    /// control message): the phase ends now if all its probes were sent.
    pub fn on_phase_reported(&mut self, now: Instant) {
        if self.state != State::Done && self.next == self.phase_len() {
            self.end_phase(now);
        }
    }

    /// Ends the phase if its timeout has passed.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.state != State::Done
            && self.next == self.phase_len()
            && now >= self.last_activity + self.cfg.phase_timeout
        {
            self.end_phase(now);
        }
    }

    fn end_phase(&mut self, now: Instant) {
        let size_bits = 8.0 * f64::from(self.cfg.size);
        match self.state {
            State::Pairs => {
                let arrivals: Vec<(Option<Instant>, Option<Instant>)> = self
                    .arrived
                    .chunks(2)
                    .map(|p| (p[0], p.get(1).copied().flatten()))
                    .collect();
                let (ce, used) = effective_capacity(&arrivals, self.cfg.size);
                self.pairs_used = used;
                let Some(ce) = ce else {
                    self.state = State::Done;
                    self.outcome = Some(Err(WbestFailure::NoPairs));
                    return;
                };
                self.capacity = ce.bps() as f64;
                self.train_gap = Duration::from_secs_f64(size_bits / self.capacity);
                self.state = State::Train;
                self.phase_start = now;
                self.last_activity = now;
                self.next = 0;
                self.arrivals = 0;
                self.sent = vec![None; self.cfg.train as usize];
                self.arrived = vec![None; self.cfg.train as usize];
            }
            State::Train => {
                let sends: Vec<Instant> = self.sent.iter().map(|s| s.expect("all sent")).collect();
                let t = train_estimate(
                    Bitrate::from_bps_f64(self.capacity),
                    &sends,
                    &self.arrived,
                    self.cfg.size,
                );
                self.state = State::Done;
                self.outcome = Some(Ok(WbestResult {
                    capacity: Bitrate::from_bps_f64(self.capacity),
                    available: t.available,
                    achievable: t.achievable,
                    pairs_used: self.pairs_used,
                    gaps_used: t.gaps_used,
                    gaps_compressed: t.gaps_compressed,
                    gaps_sender_late: t.gaps_sender_late,
                    train_loss: t.loss,
                    bytes_sent: self.bytes_sent,
                    time: now - self.first,
                }));
            }
            State::Done => {}
        }
    }

    /// The estimate once done (`None` while running).
    pub fn result(&self) -> Option<Result<WbestResult, WbestFailure>> {
        self.outcome
    }
}

/// Eq. 3: `C_e = median(L / T_i)` over the pairs whose two packets arrived with `T_i > 0`;
/// also how many pairs that was. `None` with no such pair.
pub fn effective_capacity(
    pairs: &[(Option<Instant>, Option<Instant>)],
    size: u32,
) -> (Option<Bitrate>, u32) {
    let bits = 8.0 * f64::from(size);
    let mut c: Vec<f64> = pairs
        .iter()
        .filter_map(|&(a, b)| {
            let t = b?.checked_duration_since(a?)?;
            (!t.is_zero()).then(|| bits / t.as_secs_f64())
        })
        .collect();
    let used = c.len() as u32;
    (median(&mut c).map(Bitrate::from_bps_f64), used)
}

/// The median (mean of the middle two for an even count): [`crate::stats::median_midpoint`].
pub use crate::stats::median_midpoint as median;

/// Eq. 6 (Alg. 1 lines 5–9): `A = C_e (2 − C_e / R)` if `R ≥ C_e / 2`, else 0 (bits/s).
pub fn available_from_dispersion(ce: f64, r: f64) -> f64 {
    if r > 0.0 && r >= ce / 2.0 {
        ce * (2.0 - ce / r)
    } else {
        0.0
    }
}

/// Step 2's figures from one train.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainEstimate {
    pub achievable: Bitrate,
    pub available: Bitrate,
    pub loss: f64,
    pub gaps_used: u32,
    pub gaps_compressed: u32,
    /// Gaps left out because the sender sent their second packet late.
    pub gaps_sender_late: u32,
}

/// How far past its schedule a train probe may leave before the gap in front of it is the
/// sender's (a sender-late gap, left out of `R`): half the train's gap, and at least 50 µs.
pub const SENDER_LATE_MIN: Duration = Duration::from_micros(50);

/// Alg. 1 lines 4–13 on a train sent at `ce`: `sends[k]` the send instants, `arrivals[k]` the
/// arrival instants (`None`: lost). `R = L / mean(T_k)` over the gaps between consecutive
/// packets that both arrived; eq. 6; `A ← A (1 − p)` with `p` the fraction of the train lost.
///
/// Two rules keep a real host's timing out of `R` (the module doc's deviations):
/// - *Compression* (§II-E) is applied to each run of consecutive gaps, not to each gap: the
///   run's arrival span is raised to its sending span when shorter, the sending span counted
///   as at least the schedule's (`g = L / C_e` per gap). A receiver that stamps one packet
///   late and the next ones at once stretches one gap and compresses the next; raising each
///   compressed gap alone would count the delay twice.
/// - A gap whose second packet left more than `max(g/2, 50 µs)` after its sending gap `g =
///   L / C_e` (the sender was descheduled: pre-dispersion by the sender itself, which a fluid
///   link passes on one for one) is left out and splits the run, as long as at least half of
///   the gaps remain; otherwise every gap is used.
pub fn train_estimate(
    ce: Bitrate,
    sends: &[Instant],
    arrivals: &[Option<Instant>],
    size: u32,
) -> TrainEstimate {
    let bits = 8.0 * f64::from(size);
    let m = arrivals.len();
    let lost = arrivals.iter().filter(|a| a.is_none()).count();
    let p = if m == 0 { 0.0 } else { lost as f64 / m as f64 };
    let send_gap = |k: usize| -> Option<Duration> {
        Some(sends.get(k + 1)?.saturating_duration_since(*sends.get(k)?))
    };
    // A gap both of whose packets arrived, in order: its arrival gap.
    let arrival_gap =
        |k: usize| -> Option<Duration> { arrivals[k + 1]?.checked_duration_since(arrivals[k]?) };
    // The train's sending gap `g` (none without a rate to send at: no gap is then late).
    let scheduled = (ce.bps() > 0).then(|| Duration::from_secs_f64(bits / ce.bps() as f64));
    let sent_late = |k: usize| {
        scheduled.is_some_and(|g| send_gap(k).is_some_and(|s| s > g + (g / 2).max(SENDER_LATE_MIN)))
    };
    let gaps = m.saturating_sub(1);
    let measured = (0..gaps).filter(|&k| arrival_gap(k).is_some()).count();
    let late = (0..gaps)
        .filter(|&k| arrival_gap(k).is_some() && sent_late(k))
        .count();
    let drop_late = late > 0 && 2 * (measured - late) >= measured;
    let usable = |k: usize| arrival_gap(k).is_some() && !(drop_late && sent_late(k));
    let (mut sum, mut used, mut compressed) = (0.0, 0u32, 0u32);
    let mut k = 0;
    while k < gaps {
        if !usable(k) {
            k += 1;
            continue;
        }
        let first = k;
        while k < gaps && usable(k) {
            k += 1;
        }
        // Packets first..=k, all arrived, in order, none after a sender-late gap.
        let n = (k - first) as u32;
        let arrived = arrivals[k]
            .zip(arrivals[first])
            .map(|(b, a)| b.saturating_duration_since(a))
            .unwrap_or(Duration::ZERO);
        // What the run took to send, and at least what it was scheduled to take (a sender
        // catching up after a delay sends faster than `C_e`, faster than the link it measures
        // can deliver).
        let sent = sends
            .get(k)
            .zip(sends.get(first))
            .map(|(b, a)| b.saturating_duration_since(*a))
            .unwrap_or(Duration::ZERO)
            .max(scheduled.map_or(Duration::ZERO, |g| g * u64::from(n)));
        let t = if arrived < sent {
            compressed += n;
            sent
        } else {
            arrived
        };
        sum += t.as_secs_f64();
        used += n;
    }
    let r = if used > 0 && sum > 0.0 {
        bits / (sum / f64::from(used))
    } else {
        0.0
    };
    let mut a = available_from_dispersion(ce.bps() as f64, r);
    if p > 0.0 {
        a *= 1.0 - p;
    }
    TrainEstimate {
        achievable: Bitrate::from_bps_f64(r),
        available: Bitrate::from_bps_f64(a.max(0.0)),
        loss: p,
        gaps_used: used,
        gaps_compressed: compressed,
        gaps_sender_late: if drop_late { late as u32 } else { 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }
    fn t(n: u64) -> Instant {
        Instant::ZERO + us(n)
    }
    fn mbps(b: Bitrate) -> f64 {
        b.bps() as f64 / 1e6
    }

    /// Runs a WBest estimate against a hand-built timeline: `pair_gap(i)` is pair i's
    /// dispersion (None: lost), `train_gap(k)` the arrival gap before train packet k (None:
    /// packet k lost), each arrival `delay` after its send otherwise.
    fn run(
        cfg: WbestConfig,
        pair_disp: impl Fn(u32) -> Option<Duration>,
        train_arrival: impl Fn(u32, Instant) -> Option<Instant>,
    ) -> WbestResult {
        let mut w = Wbest::new(cfg, t(0)).unwrap();
        let mut now = t(0);
        let mut pending: Vec<(Instant, WbestPhase, u32)> = vec![];
        for _ in 0..100_000 {
            while let Some(p) = w.poll_transmit(now) {
                match p.phase {
                    WbestPhase::Pairs => {
                        let pair = p.index / 2;
                        if let Some(d) = pair_disp(pair) {
                            let first = p.due + us(1000);
                            let at = if p.index % 2 == 0 { first } else { first + d };
                            pending.push((at, p.phase, p.index));
                        }
                    }
                    WbestPhase::Train => {
                        if let Some(at) = train_arrival(p.index, p.due) {
                            pending.push((at, p.phase, p.index));
                        }
                    }
                }
            }
            pending.sort_by_key(|x| std::cmp::Reverse(x.0));
            let next_arrival = pending.last().map(|x| x.0);
            let Some(wake) = [w.poll_timeout(), next_arrival].into_iter().flatten().min() else {
                break;
            };
            now = wake.max(now);
            while pending.last().is_some_and(|x| x.0 <= now) {
                let (at, ph, i) = pending.pop().unwrap();
                w.on_probe_received(at, ph, i);
            }
            w.on_timeout(now);
            if w.result().is_some() {
                break;
            }
        }
        w.result().expect("finished").expect("an estimate")
    }

    #[test]
    fn an_idle_link_gives_a_equal_to_ce() {
        // 1500 B in 400 µs = 30 Mbit/s; the train arrives at its sending rate: R = C_e,
        // eq. 6 gives A = C_e (2 − 1) = C_e.
        let r = run(
            WbestConfig::default(),
            |_| Some(us(400)),
            |_, due| Some(due + us(1000)),
        );
        assert!((mbps(r.capacity) - 30.0).abs() < 1e-3, "{r:?}");
        assert!((mbps(r.available) - 30.0).abs() < 1e-2, "{r:?}");
        assert_eq!(r.pairs_used, 30);
        assert_eq!(r.gaps_used, 29);
        assert_eq!(r.bytes_sent, 90 * 1500);
        assert_eq!(r.train_loss, 0.0);
    }

    #[test]
    fn the_median_of_pair_rates_ignores_outliers() {
        // 20 pairs at 400 µs (30 Mbit/s), 10 at 1200 µs (10 Mbit/s): the median is 30.
        let r = run(
            WbestConfig::default(),
            |i| Some(if i % 3 == 0 { us(1200) } else { us(400) }),
            |_, due| Some(due),
        );
        assert!((mbps(r.capacity) - 30.0).abs() < 1e-3);
        // Even count: 15 at 12 Mbit/s (1000 µs) and 15 at 24 Mbit/s (500 µs): (12 + 24) / 2.
        let r = run(
            WbestConfig::default(),
            |i| Some(if i % 2 == 0 { us(1000) } else { us(500) }),
            |_, due| Some(due),
        );
        assert!((mbps(r.capacity) - 18.0).abs() < 1e-3, "{r:?}");
    }

    #[test]
    fn eq6_on_a_slower_train() {
        // C_e = 30 Mbit/s (send gap 400 µs); the train arrives every 500 µs: R = 24 Mbit/s,
        // A = 30 (2 − 30/24) = 22.5 Mbit/s.
        let r = run(
            WbestConfig::default(),
            |_| Some(us(400)),
            |k, _| Some(t(500_000) + us(500) * u64::from(k)),
        );
        assert!((mbps(r.achievable) - 24.0).abs() < 1e-3, "{r:?}");
        assert!((mbps(r.available) - 22.5).abs() < 1e-3, "{r:?}");
    }

    #[test]
    fn below_half_of_ce_is_zero() {
        // Every 900 µs: R = 13.33 < 15 = C_e / 2 → A = 0.
        let r = run(
            WbestConfig::default(),
            |_| Some(us(400)),
            |k, _| Some(t(500_000) + us(900) * u64::from(k)),
        );
        assert_eq!(r.available, Bitrate::ZERO);
        // Exactly half (800 µs): A = 30 (2 − 2) = 0 too, by the formula.
        assert_eq!(available_from_dispersion(30e6, 15e6), 0.0);
        assert!((available_from_dispersion(30e6, 20e6) - 15e6).abs() < 1e-6);
    }

    #[test]
    fn train_loss_scales_a_and_breaks_gaps() {
        // Packets 5, 6, 20 lost of 30: p = 0.1. Gaps kept: 29 − 4 (4..5, 5..6, 6..7, 19..20,
        // 20..21 → 5 lost) = 24, each 500 µs: R = 24, A = 22.5 × 0.9 = 20.25.
        let r = run(
            WbestConfig::default(),
            |_| Some(us(400)),
            |k, _| (![5, 6, 20].contains(&k)).then(|| t(500_000) + us(500) * u64::from(k)),
        );
        assert!((r.train_loss - 0.1).abs() < 1e-12);
        assert_eq!(r.gaps_used, 24);
        assert!((mbps(r.available) - 20.25).abs() < 1e-3, "{r:?}");
    }

    #[test]
    fn compressed_gaps_take_the_sending_gap() {
        // The train arrives in a burst (10 µs apart): every gap is raised to 400 µs, R = C_e.
        let r = run(
            WbestConfig::default(),
            |_| Some(us(400)),
            |k, _| Some(t(500_000) + us(10) * u64::from(k)),
        );
        assert_eq!(r.gaps_compressed, 29);
        assert!((mbps(r.available) - 30.0).abs() < 1e-2, "{r:?}");
    }

    /// A train at 12 Mbit/s (1 ms gaps) into an idle 12 Mbit/s link, with `arrive(k, sent)`.
    fn train_12(
        sends: &[Instant],
        arrive: impl Fn(usize, Instant) -> Option<Instant>,
    ) -> TrainEstimate {
        let arrivals: Vec<Option<Instant>> = sends
            .iter()
            .enumerate()
            .map(|(k, &s)| arrive(k, s))
            .collect();
        train_estimate(Bitrate::from_bps(12_000_000), sends, &arrivals, 1500)
    }

    #[test]
    fn a_late_receive_stamp_is_not_counted_twice() {
        // The receiver stamps packet 10 2 ms late and packets 11 and 12 at once behind it:
        // gaps of 3000, 0 and 0 µs where 1000 each were sent. Per gap, the compression rule
        // would count 3000 + 1000 + 1000; per run, the span is what it was: R = C_e, A = C_e.
        let sends: Vec<Instant> = (0..30).map(|k| t(1000 * k)).collect();
        let r = train_12(&sends, |k, s| {
            Some(match k {
                10..=12 => t(17_000),
                _ => s + us(5000),
            })
        });
        assert_eq!(r.gaps_used, 29);
        assert!((mbps(r.available) - 12.0).abs() < 1e-6, "{r:?}");
        assert_eq!(r.gaps_sender_late, 0);
    }

    #[test]
    fn gaps_the_sender_stretched_are_left_out() {
        // The sender is descheduled for 2 ms before packet 10 and then catches up (10, 11, 12
        // back to back); the idle link delivers 10 2 ms late and the rest a millisecond apart
        // behind it. The gap before 10 measures the sender: without it, R = C_e.
        let sends: Vec<Instant> = (0..30)
            .map(|k| match k {
                10..=12 => t(12_000 + 10 * (k - 10)),
                _ => t(1000 * k),
            })
            .collect();
        let arrive = |k: usize, s: Instant| {
            Some(match k {
                0..=9 => s + us(5000),
                _ => t(17_000 + 1000 * (k as u64 - 10)),
            })
        };
        let r = train_12(&sends, arrive);
        assert_eq!(r.gaps_sender_late, 1);
        assert_eq!(r.gaps_used, 28);
        assert!((mbps(r.available) - 12.0).abs() < 1e-6, "{r:?}");
        // If the host then stamps the catch-up packets together (a train ending with them:
        // 10, 11, 12 stamped at once), their run is held to the schedule's pace (C_e), not
        // to the burst's 10 µs gaps: R = C_e.
        let bunched = |k: usize, s: Instant| Some(if k < 10 { s + us(5000) } else { t(19_000) });
        let r = train_12(&sends[..13], bunched);
        assert_eq!((r.gaps_sender_late, r.gaps_used), (1, 11));
        assert!((mbps(r.available) - 12.0).abs() < 1e-6, "{r:?}");
        // When most gaps are late, every gap is used (nothing better to go on).
        let slow: Vec<Instant> = (0..30).map(|k| t(3000 * k)).collect();
        let r = train_12(&slow, |_, s| Some(s + us(5000)));
        assert_eq!((r.gaps_sender_late, r.gaps_used), (0, 29));
        assert!((mbps(r.achievable) - 4.0).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn lost_pairs_are_skipped_and_no_pairs_fails() {
        let r = run(
            WbestConfig::default(),
            |i| (i >= 20).then_some(us(400)),
            |_, due| Some(due),
        );
        assert_eq!(r.pairs_used, 10);
        let mut w = Wbest::new(WbestConfig::default(), t(0)).unwrap();
        let mut now = t(0);
        while w.result().is_none() {
            while w.poll_transmit(now).is_some() {}
            now = w.poll_timeout().unwrap();
            w.on_timeout(now);
        }
        assert_eq!(w.result(), Some(Err(WbestFailure::NoPairs)));
        // 300 ms after the last pair (due at 290 ms).
        assert_eq!(now, t(590_000));
    }

    #[test]
    fn time_to_result_follows_the_schedule() {
        // Pairs due 0..290 ms, each arriving 1 ms + 400 µs later: the phase ends at
        // 291.4 ms when the last arrives; the train (gap 400 µs) leaves then, its last packet
        // due 29 × 400 µs later and arriving 1 ms after that.
        let r = run(
            WbestConfig::default(),
            |_| Some(us(400)),
            |_, due| Some(due + us(1000)),
        );
        let expect = 291_400 + 29 * 400 + 1000;
        assert_eq!(r.time, us(expect));
    }

    #[test]
    fn wbest_plus_bursts_pairs() {
        let cfg = WbestConfig::wbest_plus();
        let mut w = Wbest::new(cfg, t(0)).unwrap();
        // 66 packets due at 0, the next at 10 ms.
        let mut n = 0;
        while w.poll_transmit(t(0)).is_some() {
            n += 1;
        }
        assert_eq!(n, 66);
        assert_eq!(w.poll_timeout(), Some(t(10_000)));
        assert_eq!(cfg.bytes(), (330 + 100) * 1500);
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let bad = |c: WbestConfig| Wbest::new(c, t(0)).unwrap_err().key;
        let d = WbestConfig::default();
        assert_eq!(bad(WbestConfig { pairs: 0, ..d }), "pairs");
        assert_eq!(bad(WbestConfig { train: 1, ..d }), "train");
        assert_eq!(bad(WbestConfig { size: 10, ..d }), "size");
        assert_eq!(bad(WbestConfig { burst: 31, ..d }), "burst");
        assert_eq!(
            bad(WbestConfig {
                phase_timeout: Duration::ZERO,
                ..d
            }),
            "phase_timeout"
        );
    }

    #[test]
    fn duplicate_and_stray_arrivals_are_ignored() {
        let mut w = Wbest::new(WbestConfig::default(), t(0)).unwrap();
        let p = w.poll_transmit(t(0)).unwrap();
        w.on_probe_received(t(5), p.phase, p.index);
        w.on_probe_received(t(6), p.phase, p.index);
        w.on_probe_received(t(7), WbestPhase::Pairs, 59); // not sent yet
        w.on_probe_received(t(7), WbestPhase::Train, 0); // other phase
        w.on_probe_received(t(7), WbestPhase::Pairs, u32::MAX);
        assert_eq!(w.arrivals, 1);
    }
}
