//! NADA's receiver (RFC 8698 §4.2): the per-packet delay, loss and marking statistics, the
//! aggregate congestion signal x_curr, the receiving rate r_recv and the rate update mode,
//! reported every DELTA ([`NadaFeedback`]).

use super::NadaConfig;
use super::feedback::{Mode, NadaFeedback};
use crate::controller::Receiver;
use crate::packet::DataHeader;
use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use crate::wire::RttEcho;
use std::collections::VecDeque;

/// Taps of the minimum filter over the per-packet queueing-delay samples (§4.2; its delay is
/// what DFILT bounds in the ramp-up's gamma, §4.3 eq. (3)).
pub const FILTER_TAPS: usize = 15;

/// §4.2 eq. (1), the non-linear warping of the queueing delay when losses are recent: d_queue
/// below QTH is kept; above, it decays as QTH·exp(−LAMBDA·(d_queue − QTH)/QTH), so that a
/// flow on a lossy, full queue is steered by its losses rather than by a delay it cannot lower.
/// Times in seconds.
pub fn warp(d_queue: f64, qth: f64, lambda: f64) -> f64 {
    if d_queue < qth {
        d_queue
    } else {
        qth * (-lambda * (d_queue - qth) / qth).exp()
    }
}

/// §4.2 eq. (2): x_curr = d_tilde + DMARK·(p_mark/PMRREF)² + DLOSS·(p_loss/PLRREF)², in
/// seconds.
pub fn congestion_signal(c: &NadaConfig, d_tilde: f64, p_mark: f64, p_loss: f64) -> f64 {
    let mark = c.dmark.as_secs_f64() * (p_mark / c.pmrref).powi(2);
    let loss = c.dloss.as_secs_f64() * (p_loss / c.plrref).powi(2);
    d_tilde + mark + loss
}

/// One received packet, kept for the observation window LOGWIN.
#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Instant,
    bytes: u64,
    /// The filtered queueing delay after this packet, s.
    d_queue: f64,
    /// Packets missing (by sequence number) just before this one.
    lost_before: u64,
    marked: bool,
}

/// Losses as the warping needs them: whether the last one is recent, measured against the
/// average loss interval (§4.2: loss_int, loss_exp = MULTILOSS·loss_int, in packets).
#[derive(Clone, Copy, Debug, Default)]
struct LossHistory {
    /// Packets received since the last loss (or since the start).
    since: u64,
    /// loss_int: the average interval between losses, in packets (ALPHA-smoothed).
    interval: Option<f64>,
}

impl LossHistory {
    fn on_packet(&mut self, lost_before: u64, alpha: f64) {
        if lost_before > 0 {
            let gap = self.since as f64;
            self.interval = Some(
                self.interval
                    .map_or(gap, |m| alpha * gap + (1.0 - alpha) * m),
            );
            self.since = 0;
        }
        self.since += 1;
    }

    /// The last loss is within loss_exp packets.
    fn recent(&self, multiloss: f64) -> bool {
        self.interval
            .is_some_and(|m| (self.since as f64) < multiloss * m.max(1.0))
    }
}

/// NADA's receiver.
#[derive(Clone, Debug)]
pub struct NadaReceiver {
    c: NadaConfig,
    /// d_base: the smallest one-way delay seen, s (relative: the clocks need not agree).
    base: Option<f64>,
    /// The last [`FILTER_TAPS`] raw queueing-delay samples, s.
    taps: VecDeque<f64>,
    window: VecDeque<Sample>,
    highest: Option<u64>,
    losses: LossHistory,
    /// The smoothed ratios (§4.2, ALPHA).
    p_loss: f64,
    p_mark: f64,
    /// The newest packet's send time and arrival (for the RTT echo).
    newest: Option<(Instant, Instant)>,
    first_arrival: Option<Instant>,
    /// The next report, while packets come.
    next: Option<Instant>,
    arrived: bool,
    pending: Option<NadaFeedback>,
}

impl NadaReceiver {
    pub fn new(config: &NadaConfig) -> Self {
        NadaReceiver {
            c: config.clone(),
            base: None,
            taps: VecDeque::with_capacity(FILTER_TAPS + 1),
            window: VecDeque::new(),
            highest: None,
            losses: LossHistory::default(),
            p_loss: 0.0,
            p_mark: 0.0,
            newest: None,
            first_arrival: None,
            next: None,
            arrived: false,
            pending: None,
        }
    }

    /// A packet arrived, ECN-CE-marked or not ([`Receiver::on_packet_received`] passes whether
    /// it arrived CE; with `ecn=off`, the default, marks are not counted).
    pub fn on_packet(&mut self, now: Instant, packet: &DataHeader, marked: bool) {
        // §4.2: d_fwd = t_curr − t_sent; d_base = min(d_base, d_fwd); d_queue = d_fwd − d_base.
        let d_fwd = (now.as_nanos() as f64 - packet.send_time.as_nanos() as f64) / 1e9;
        let base = self.base.map_or(d_fwd, |b| b.min(d_fwd));
        self.base = Some(base);
        self.taps.push_back(d_fwd - base);
        if self.taps.len() > FILTER_TAPS {
            self.taps.pop_front();
        }
        let d_queue = self.taps.iter().copied().fold(f64::INFINITY, f64::min);
        let lost_before = match self.highest {
            Some(h) if packet.seq > h => packet.seq - h - 1,
            Some(_) => 0,
            None => 0,
        };
        self.highest = Some(self.highest.map_or(packet.seq, |h| h.max(packet.seq)));
        self.losses.on_packet(lost_before, self.c.alpha);
        self.window.push_back(Sample {
            at: now,
            bytes: packet.size.bytes(),
            d_queue,
            lost_before,
            marked: marked && self.c.ecn,
        });
        self.evict(now);
        if self.newest.is_none_or(|(sent, _)| packet.send_time >= sent) {
            self.newest = Some((packet.send_time, now));
        }
        self.first_arrival.get_or_insert(now);
        self.arrived = true;
        if self.next.is_none() {
            self.next = Some(now + self.c.delta);
        }
    }

    /// Drops the samples older than LOGWIN.
    fn evict(&mut self, now: Instant) {
        let from = now.saturating_sub(self.c.logwin);
        while self.window.front().is_some_and(|s| s.at < from) {
            self.window.pop_front();
        }
    }

    /// The current queueing-delay estimate (the filter's output), if any packet came.
    pub fn d_queue(&self) -> Option<Duration> {
        self.window
            .back()
            .map(|s| Duration::from_secs_f64(s.d_queue))
    }

    /// The report at `now` (§4.2): the window's statistics, smoothed; the warping if losses are
    /// recent; x_curr; r_recv; rmode.
    fn report(&mut self, now: Instant) -> NadaFeedback {
        self.evict(now);
        let (mut received, mut lost, mut marked, mut bytes) = (0u64, 0u64, 0u64, 0u64);
        let mut max_queue = 0.0f64;
        for s in &self.window {
            received += 1;
            lost += s.lost_before;
            marked += u64::from(s.marked);
            bytes += s.bytes;
            max_queue = max_queue.max(s.d_queue);
        }
        let ratio = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
        let a = self.c.alpha;
        self.p_loss = a * ratio(lost, received + lost) + (1.0 - a) * self.p_loss;
        self.p_mark = a * ratio(marked, received) + (1.0 - a) * self.p_mark;
        let d_queue = self.window.back().map_or(0.0, |s| s.d_queue);
        let d_tilde = if self.losses.recent(self.c.multiloss) {
            warp(d_queue, self.c.qth.as_secs_f64(), self.c.lambda)
        } else {
            d_queue
        };
        let x_curr = congestion_signal(&self.c, d_tilde, self.p_mark, self.p_loss);
        let span = self
            .first_arrival
            .map_or(Duration::ZERO, |f| now.saturating_duration_since(f))
            .min(self.c.logwin);
        let r_recv = if span.is_zero() {
            Bitrate::ZERO
        } else {
            Bitrate::from_bps_f64(bytes as f64 * 8.0 / span.as_secs_f64())
        };
        let quiet = lost == 0 && marked == 0 && max_queue < self.c.qeps.as_secs_f64();
        let (sent, arrived) = self.newest.unwrap_or((now, now));
        NadaFeedback {
            x_curr: Duration::from_secs_f64(x_curr),
            rmode: if quiet { Mode::RampUp } else { Mode::Gradual },
            r_recv,
            echo: RttEcho {
                sent,
                held: now.saturating_duration_since(arrived),
            },
        }
    }
}

impl Receiver for NadaReceiver {
    type Feedback = NadaFeedback;
    type Fields = ();

    /// §4.2: a packet that arrives CE counts towards the marking ratio p_mark.
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, _fields: &()) {
        self.on_packet(now, packet, packet.ecn.is_ce());
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<NadaFeedback> {
        self.pending.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }

    /// Every DELTA while packets come (§4.2, "t_curr − t_last > DELTA"); a receiver that got
    /// nothing over an interval stops until the next packet.
    fn on_timeout(&mut self, now: Instant) {
        let Some(due) = self.next.filter(|&t| t <= now) else {
            return;
        };
        if self.arrived {
            self.pending = Some(self.report(now));
            self.arrived = false;
            self.next = Some((due + self.c.delta).max(now));
        } else {
            self.next = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::DataSize;

    fn ms(n: f64) -> f64 {
        n / 1000.0
    }

    fn packet(seq: u64, sent_ms: u64) -> DataHeader {
        DataHeader {
            seq,
            send_time: Instant::from_millis(sent_ms),
            size: DataSize::from_bytes(1000),
            ..Default::default()
        }
    }

    /// Eq. (1) with QTH = 50 ms, LAMBDA = 0.5: below QTH unchanged; at QTH, QTH; at 150 ms,
    /// 50·exp(−0.5·100/50) = 50·e⁻¹ = 18.394 ms.
    #[test]
    fn warping_by_hand() {
        assert_eq!(warp(ms(30.0), ms(50.0), 0.5), ms(30.0));
        assert!((warp(ms(50.0), ms(50.0), 0.5) - ms(50.0)).abs() < 1e-12);
        let w = warp(ms(150.0), ms(50.0), 0.5);
        assert!((w - ms(18.393_972)).abs() < 1e-8, "{w}");
    }

    /// Eq. (2) with the RFC's references: d_tilde 20 ms, p_loss 0.02 → 10·(0.02/0.01)² = 40 ms,
    /// x_curr 60 ms; with p_mark 0.005, 2·(0.005/0.01)² = 0.5 ms more.
    #[test]
    fn congestion_signal_by_hand() {
        let c = NadaConfig::default();
        let x = congestion_signal(&c, ms(20.0), 0.0, 0.02);
        assert!((x - ms(60.0)).abs() < 1e-12, "{x}");
        let x = congestion_signal(&c, ms(20.0), 0.005, 0.02);
        assert!((x - ms(60.5)).abs() < 1e-12, "{x}");
    }

    /// Feeds `seqs` to `r`: 1000-byte packets sent every 10 ms, 20 ms one way, `marked` or not.
    fn feed(r: &mut NadaReceiver, seqs: impl Iterator<Item = u64>, marked: impl Fn(u64) -> bool) {
        for seq in seqs {
            // 20 ms one-way, 10 ms apart.
            r.on_packet(
                Instant::from_millis(seq * 10 + 20),
                &packet(seq, seq * 10),
                marked(seq),
            );
        }
    }

    fn report_at(r: &mut NadaReceiver, at_ms: u64) -> NadaFeedback {
        r.on_timeout(Instant::from_millis(at_ms));
        r.poll_feedback(Instant::from_millis(at_ms))
            .expect("a report")
    }

    #[test]
    fn quiet_path_reports_ramp_up_and_the_rate() {
        let mut r = NadaReceiver::new(&NadaConfig::default());
        feed(&mut r, 0..10, |_| false);
        // The first report DELTA after the first packet (at 20 ms).
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(120)));
        let m = report_at(&mut r, 120);
        assert_eq!(m.rmode, Mode::RampUp);
        assert_eq!(m.x_curr, Duration::ZERO);
        // 10 packets of 8000 bits over the 100 ms since the first: 800 kbit/s.
        assert_eq!(m.r_recv, Bitrate::from_kbps(800));
        // The newest packet (9, sent at 90 ms, in at 110 ms) held 10 ms.
        assert_eq!(m.echo.sent, Instant::from_millis(90));
        assert_eq!(m.echo.held, Duration::from_millis(10));
        // Idle: no report, no wake-up.
        r.on_timeout(Instant::from_millis(220));
        assert!(r.poll_feedback(Instant::from_millis(220)).is_none());
        assert_eq!(r.poll_timeout(), None);
    }

    /// A loss of 1 in 50 (49 received) over the window: the instantaneous ratio 0.02, smoothed once with
    /// ALPHA = 0.1 from 0: p_loss = 0.002, so x_curr = 10 ms·(0.002/0.01)² = 0.4 ms and the
    /// mode is gradual.
    #[test]
    fn a_loss_gives_the_smoothed_penalty_and_the_gradual_mode() {
        let mut r = NadaReceiver::new(&NadaConfig::default());
        feed(&mut r, (0..50).filter(|&s| s != 25), |_| false);
        let m = report_at(&mut r, 500);
        assert_eq!(m.rmode, Mode::Gradual);
        assert_eq!(m.x_curr, Duration::from_micros(400));
    }

    /// Queue build-up: the minimum filter passes a delay that every one of the last 15 packets
    /// saw; above QEPS (10 ms) the mode is gradual.
    #[test]
    fn queueing_delay_is_min_filtered_and_ends_the_ramp_up() {
        let mut r = NadaReceiver::new(&NadaConfig::default());
        feed(&mut r, 0..20, |_| false);
        // One late packet: 30 ms more delay; the filter ignores it.
        r.on_packet(Instant::from_millis(250), &packet(20, 200), false);
        assert_eq!(r.d_queue(), Some(Duration::ZERO));
        // 15 packets each 30 ms late: the filter passes 30 ms.
        for seq in 21..36 {
            r.on_packet(
                Instant::from_millis(seq * 10 + 50),
                &packet(seq, seq * 10),
                false,
            );
        }
        assert_eq!(r.d_queue(), Some(Duration::from_millis(30)));
        let m = report_at(&mut r, 410);
        assert_eq!(m.rmode, Mode::Gradual);
        assert_eq!(m.x_curr, Duration::from_millis(30));
    }

    /// ECN: 1 in 10 marked, p_mark = 0.1·0.1 = 0.01 after one report, DMARK·(0.01/0.01)² =
    /// 2 ms. With `ecn=off` marks are ignored.
    #[test]
    fn ecn_marks_count_only_when_enabled() {
        let on = NadaConfig {
            ecn: true,
            ..NadaConfig::default()
        };
        let mut r = NadaReceiver::new(&on);
        feed(&mut r, 0..10, |s| s == 3);
        let m = report_at(&mut r, 120);
        assert_eq!(m.rmode, Mode::Gradual);
        assert_eq!(m.x_curr, Duration::from_millis(2));
        let mut off = NadaReceiver::new(&NadaConfig::default());
        feed(&mut off, 0..10, |s| s == 3);
        let m = report_at(&mut off, 120);
        assert_eq!(m.rmode, Mode::RampUp);
        assert_eq!(m.x_curr, Duration::ZERO);
    }

    /// With a recent loss the delay term is warped: 100 ms of queueing becomes
    /// 50·exp(−0.5·50/50) = 30.327 ms.
    #[test]
    fn recent_loss_warps_the_delay() {
        let mut r = NadaReceiver::new(&NadaConfig::default());
        for seq in (0..40).filter(|&s| s != 30) {
            let extra = if seq > 20 { 100 } else { 0 };
            r.on_packet(
                Instant::from_millis(seq * 10 + 20 + extra),
                &packet(seq, seq * 10),
                false,
            );
        }
        let m = report_at(&mut r, 520);
        // p_loss = 0.1 · 1/40 = 0.0025: 10·0.25² = 0.625 ms on top.
        let expected = 50.0 * (-0.5f64).exp() + 0.625;
        let got = m.x_curr.as_millis_f64();
        assert!((got - expected).abs() < 1e-3, "{got} vs {expected}");
    }

    /// Through the contract: the codepoint a packet arrives with is what counts, CE a mark,
    /// ECT(0) none (the same 1 in 10 as above, 2 ms).
    #[test]
    fn the_arrival_codepoint_is_the_mark() {
        use crate::packet::Ecn;
        let on = NadaConfig {
            ecn: true,
            ..NadaConfig::default()
        };
        let mut r = NadaReceiver::new(&on);
        for seq in 0..10 {
            let ecn = if seq == 3 { Ecn::Ce } else { Ecn::Ect0 };
            let p = DataHeader {
                ecn,
                ..packet(seq, seq * 10)
            };
            Receiver::on_packet_received(&mut r, Instant::from_millis(seq * 10 + 20), &p, &());
        }
        let m = report_at(&mut r, 120);
        assert_eq!(m.x_curr, Duration::from_millis(2));
    }
}
