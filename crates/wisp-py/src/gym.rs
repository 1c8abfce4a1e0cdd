//! The native half of `wisp.gym.RateControlEnv`: one episode is one simulation, run on a thread
//! of its own, whose sender stops at the end of every monitor interval (MI), hands what it has
//! learnt in the interval to Python, and waits for the rate of the next one.
//!
//! The scheme (`gym`) is a rate-based sender of MTU-sized bulk packets and a receiver that
//! acknowledges every packet at once (its sequence number and arrival time, a 16-byte message of
//! kind 201), as Aurora's simulator does. The sender knows what a real sender can: what it sent,
//! and the acknowledgements that came back. Per MI (the acknowledgements that arrived in it):
//!
//! | field | meaning |
//! |---|---|
//! | `send_kbps` | bytes sent in the MI × 8 / MI |
//! | `recv_kbps` | bytes acknowledged in the MI × 8 / MI |
//! | `rtt_ms` | mean round-trip time of the packets acknowledged in the MI (the previous MI's if none) |
//! | `rtt_ratio` | `rtt_ms` / the smallest round-trip time seen so far in the episode (1 before any) |
//! | `delay_gradient` | least-squares slope of the round-trip time against the packet's send time, s/s (0 with fewer than two): (r − c)/c for a rate r into a queue served at c |
//! | `loss_rate` | packets found lost in the MI / (those + the acknowledged); a packet is lost when a later one is acknowledged first (the path does not reorder) |
//! | `rate_kbps` | the rate the sender was told to use in the MI |
//!
//! The thread hand-off is a mutex and a condition variable; Python waits with the GIL released.
//! Dropping or closing an episode tells the sender to stop: it sends nothing more, and the
//! simulation runs out its (at most one MI of) remaining time and ends.

use crate::controller::secs;
use crate::value_error;
use pyo3::prelude::*;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use wisp_core::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use wisp_core::pacer::Pacer;
use wisp_core::packet::DataHeader;
use wisp_core::scheme::params::Parameters;
use wisp_core::scheme::{
    BuildError, CustomScheme, Halves, ParamError, Scheme, SchemeConfig, SchemeContext, SchemeInfo,
};
use wisp_core::source::Source;
use wisp_core::wire::{Message, Reader, WireError, Writer, frame, unframe};
use wisp_core::{Bitrate, DataSize, Duration, Instant};
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::sim::FlowSpec;

/// The number of fields of an observation.
pub const FIELDS: usize = 7;
type Obs = [f64; FIELDS];

#[derive(Debug, Default)]
struct State {
    obs: Option<Obs>,
    rate: Option<Bitrate>,
    /// Python has left: the sender stops.
    closed: bool,
    /// The simulation has ended (with an error message if it could not run).
    finished: Option<Option<String>>,
}

#[derive(Debug, Default)]
struct Mailbox {
    state: Mutex<State>,
    cv: Condvar,
}

impl Mailbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The simulation's side: posts an observation, waits for the next rate (`None`: closed).
    fn exchange(&self, obs: Obs) -> Option<Bitrate> {
        let mut s = self.lock();
        s.obs = Some(obs);
        self.cv.notify_all();
        loop {
            if s.closed {
                return None;
            }
            if let Some(r) = s.rate.take() {
                return Some(r);
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn finish(&self, error: Option<String>) {
        let mut s = self.lock();
        s.finished = Some(error);
        self.cv.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }

    /// Python's side: posts a rate (if any), waits for the next observation (`Err`: the
    /// simulation ended first, with its error if any).
    fn wait_obs(&self, rate: Option<Bitrate>) -> Result<Obs, Option<String>> {
        let mut s = self.lock();
        if rate.is_some() {
            s.rate = rate;
            self.cv.notify_all();
        }
        loop {
            if let Some(o) = s.obs.take() {
                return Ok(o);
            }
            if let Some(f) = &s.finished {
                return Err(f.clone());
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The acknowledgement of one packet, kind 201.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ack {
    seq: u64,
    arrival: Instant,
}

impl Message for Ack {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, 201, |out| {
            out.put_u64(self.seq);
            out.put_instant(self.arrival);
        });
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p): (u8, Reader<'_>) = unframe(buf)?;
        if kind != 201 {
            return Err(WireError::UnknownKind(kind));
        }
        let a = Ack {
            seq: p.u64()?,
            arrival: p.instant()?,
        };
        p.finish()?;
        Ok(a)
    }
}

/// The configuration of the episode's scheme.
#[derive(Clone, Debug)]
struct GymConfig {
    start: Bitrate,
    mi: Duration,
    mailbox: Arc<Mailbox>,
}

impl PartialEq for GymConfig {
    fn eq(&self, other: &Self) -> bool {
        self.start == other.start
            && self.mi == other.mi
            && Arc::ptr_eq(&self.mailbox, &other.mailbox)
    }
}

impl Parameters for GymConfig {
    fn param_list(&self) -> Vec<(&'static str, String)> {
        vec![]
    }
    fn param_docs(&self) -> Vec<(String, String)> {
        vec![]
    }
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        match given.first() {
            None => Ok(()),
            Some((k, _)) => Err(ParamError::UnknownParam {
                scheme: "gym".to_string(),
                key: k.to_string(),
                accepted: "(none)".to_string(),
            }),
        }
    }
}

impl Scheme for GymConfig {
    type Sender = GymSender;
    type Receiver = GymReceiver;
    const NAMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "gym",
        summary: "the sender of wisp.gym.RateControlEnv (its rate set from Python every MI)",
    }];

    fn named(name: &str) -> Option<Self> {
        (name == "gym").then(|| GymConfig {
            start: Bitrate::from_kbps(1000),
            mi: Duration::from_millis(50),
            mailbox: Arc::default(),
        })
    }

    fn name(&self) -> &'static str {
        "gym"
    }

    fn build(&self, ctx: SchemeContext) -> Result<Halves<GymSender, GymReceiver>, BuildError> {
        let mtu = ctx.mtu();
        Ok(Halves {
            sender: GymSender {
                rate: self.start,
                mi: self.mi,
                next_mi: Instant::ZERO + self.mi,
                mailbox: self.mailbox.clone(),
                stopped: false,
                outstanding: std::collections::VecDeque::new(),
                min_rtt: None,
                last_rtt: 0.0,
                mi_stats: MiStats::default(),
            },
            receiver: GymReceiver::default(),
            source: Source::bulk(mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

#[derive(Debug, Default)]
struct MiStats {
    sent: u64,
    acked_bytes: u64,
    acked: u64,
    lost: u64,
    /// Sums for the mean and the least-squares slope of (send time s, rtt s).
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
}

#[derive(Debug)]
pub struct GymSender {
    rate: Bitrate,
    mi: Duration,
    next_mi: Instant,
    mailbox: Arc<Mailbox>,
    stopped: bool,
    /// Packets sent and not yet acknowledged or found lost: `(seq, sent, bytes)`.
    outstanding: std::collections::VecDeque<(u64, Instant, u64)>,
    min_rtt: Option<f64>,
    last_rtt: f64,
    mi_stats: MiStats,
}

impl GymSender {
    fn observation(&mut self) -> Obs {
        let m = std::mem::take(&mut self.mi_stats);
        let mi = self.mi.as_secs_f64();
        let n = m.acked as f64;
        let rtt = if m.acked > 0 { m.sy / n } else { self.last_rtt };
        self.last_rtt = rtt;
        let gradient = if m.acked >= 2 {
            let den = n * m.sxx - m.sx * m.sx;
            if den > 0.0 {
                (n * m.sxy - m.sx * m.sy) / den
            } else {
                0.0
            }
        } else {
            0.0
        };
        let seen = m.acked + m.lost;
        [
            m.sent as f64 * 8.0 / mi / 1e3,
            m.acked_bytes as f64 * 8.0 / mi / 1e3,
            rtt * 1e3,
            self.min_rtt
                .map_or(1.0, |min| if min > 0.0 { rtt / min } else { 1.0 }),
            gradient,
            if seen == 0 {
                0.0
            } else {
                m.lost as f64 / seen as f64
            },
            self.rate.kbps_f64(),
        ]
    }
}

impl Sender for GymSender {
    type Feedback = Ack;
    type Fields = ();

    fn on_packet_sent(&mut self, now: Instant, p: &DataHeader, _: &SendContext) {
        self.mi_stats.sent += p.size.bytes();
        self.outstanding.push_back((p.seq, now, p.size.bytes()));
    }

    fn on_feedback(&mut self, now: Instant, ack: &Ack) {
        while let Some(&(seq, sent, size)) = self.outstanding.front() {
            if seq > ack.seq {
                break;
            }
            self.outstanding.pop_front();
            if seq < ack.seq {
                self.mi_stats.lost += 1;
                continue;
            }
            let rtt = (now - sent).as_secs_f64();
            let x = secs(sent);
            let m = &mut self.mi_stats;
            m.acked += 1;
            m.acked_bytes += size;
            m.sx += x;
            m.sy += rtt;
            m.sxx += x * x;
            m.sxy += x * rtt;
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |r| r.min(rtt)));
        }
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        if self.stopped {
            return Allowance::Window {
                bytes: DataSize::ZERO,
                pacing: None,
            };
        }
        Allowance::Rate {
            target: self.rate,
            pacing: self.rate,
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        (!self.stopped).then_some(self.next_mi)
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.stopped || now < self.next_mi {
            return;
        }
        let obs = self.observation();
        match self.mailbox.exchange(obs) {
            Some(rate) => {
                self.rate = rate;
                self.next_mi += self.mi;
            }
            None => self.stopped = true,
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.rate),
            window: None,
        }
    }
}

#[derive(Debug, Default)]
pub struct GymReceiver {
    pending: std::collections::VecDeque<Ack>,
}

impl Receiver for GymReceiver {
    type Feedback = Ack;
    type Fields = ();

    fn on_packet_received(&mut self, now: Instant, p: &DataHeader, _: &()) {
        self.pending.push_back(Ack {
            seq: p.seq,
            arrival: now,
        });
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<Ack> {
        self.pending.pop_front()
    }
}

/// A link loaded once for many episodes.
#[pyclass(frozen, module = "wisp._wisp", name = "Link")]
#[derive(Debug)]
pub struct PyLink {
    link: LinkModel,
}

#[pymethods]
impl PyLink {
    /// Loads a link spec (`trace:FILE`, `const:12mbps`, …).
    #[staticmethod]
    fn load(spec: &str) -> PyResult<Self> {
        let spec: LinkSpec = spec.parse().map_err(value_error)?;
        Ok(PyLink {
            link: spec.load().map_err(value_error)?,
        })
    }

    #[getter]
    fn name(&self) -> String {
        self.link.name().to_string()
    }
}

/// One episode: a simulation on its own thread, stopped at the end of every MI.
#[pyclass(module = "wisp._wisp", name = "GymEpisode")]
#[derive(Debug)]
pub struct GymEpisode {
    mailbox: Arc<Mailbox>,
    thread: Option<JoinHandle<()>>,
}

fn rate(kbps: f64) -> PyResult<Bitrate> {
    crate::controller::rate_of(kbps)
        .ok_or_else(|| value_error(format!("rate: `{kbps}` kbit/s is not 0 to 1e8")))
}

#[pymethods]
impl GymEpisode {
    /// Starts an episode of `steps` MIs of `mi_ms` on `link`; the first MI runs at
    /// `start_kbps`. Returns at once; `step` gives the observations.
    #[new]
    #[pyo3(signature = (link, steps, mi_ms=50.0, start_kbps=1000.0, delay_ms=20.0, queue=None, loss=None, seed=1))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        link: &PyLink,
        steps: u32,
        mi_ms: f64,
        start_kbps: f64,
        delay_ms: f64,
        queue: Option<&str>,
        loss: Option<&str>,
        seed: u64,
    ) -> PyResult<Self> {
        if !(mi_ms.is_finite() && mi_ms >= 1.0) {
            return Err(value_error("monitor_interval_ms: must be at least 1"));
        }
        if steps == 0 {
            return Err(value_error("steps: must be at least 1"));
        }
        let mi = Duration::from_millis_f64(mi_ms);
        let mut options = crate::run_options(delay_ms, queue, loss, None, None, 0.0, 0.0)?;
        // One MI more than the episode: the last MI's end is inside the run.
        options.duration = Some(Duration::from_nanos(mi.as_nanos() * (u64::from(steps) + 1)));
        let mailbox = Arc::new(Mailbox::default());
        let scheme = SchemeConfig::Custom(CustomScheme::new(GymConfig {
            start: rate(start_kbps)?,
            mi,
            mailbox: mailbox.clone(),
        }));
        let scenario = options.scenario(link.link.clone(), None, vec![FlowSpec::new(scheme)], seed);
        let m = mailbox.clone();
        let thread = std::thread::Builder::new()
            .name("wisp-gym".into())
            .spawn(move || {
                let r = wisp_sim::sim::simulate(&scenario, None);
                m.finish(r.err().map(|e| e.to_string()));
            })
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        Ok(GymEpisode {
            mailbox,
            thread: Some(thread),
        })
    }

    /// Sets the next MI's rate (kbit/s; `None` for the first observation) and returns the
    /// observation at its end: `(send_kbps, recv_kbps, rtt_ms, rtt_ratio, delay_gradient,
    /// loss_rate, rate_kbps)`.
    #[pyo3(signature = (rate_kbps=None))]
    fn step(&self, py: Python<'_>, rate_kbps: Option<f64>) -> PyResult<Obs> {
        let r = rate_kbps.map(rate).transpose()?;
        let mailbox = self.mailbox.clone();
        py.allow_threads(move || mailbox.wait_obs(r))
            .map_err(|e| match e {
                Some(msg) => value_error(msg),
                None => pyo3::exceptions::PyRuntimeError::new_err("the episode has ended"),
            })
    }

    /// Stops the simulation and waits for its thread.
    fn close(&mut self, py: Python<'_>) {
        self.mailbox.close();
        if let Some(t) = self.thread.take() {
            py.allow_threads(move || {
                let _ = t.join();
            });
        }
    }
}

impl Drop for GymEpisode {
    fn drop(&mut self) {
        self.mailbox.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use wisp_core::packet::{Content, SchemeFields};

    fn sender(rate_kbps: u64) -> GymSender {
        let config = GymConfig {
            start: Bitrate::from_kbps(rate_kbps),
            mi: Duration::from_millis(50),
            mailbox: Arc::default(),
        };
        config.build(SchemeContext::new()).unwrap().sender
    }

    fn header(seq: u64, ms: u64) -> DataHeader {
        DataHeader {
            seq,
            byte_seq: seq * 1500,
            send_time: Instant::from_millis(ms),
            size: DataSize::from_bytes(1500),
            content: Content::Bulk,
            fields: SchemeFields::EMPTY,
        }
    }

    #[test]
    fn an_ack_is_16_bytes_in_a_frame_of_kind_201() {
        let a = Ack {
            seq: 7,
            arrival: Instant::from_nanos(0x0102),
        };
        let mut out = vec![];
        a.emit(&mut out);
        assert_eq!(
            out,
            [201, 0, 16, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 1, 2]
        );
        assert_eq!(Ack::parse(&out), Ok(a));
    }

    /// Ten packets 5 ms apart (2.4 Mbit/s over the 50-ms MI), acknowledged 40 ms after they
    /// left plus a queueing delay growing 2 ms per packet (0.4 s per s of sending), but for
    /// packet 3, lost.
    #[test]
    fn a_monitor_intervals_statistics() {
        let mut s = sender(2400);
        let ctx = SendContext::default();
        for i in 0..10 {
            Sender::on_packet_sent(&mut s, Instant::from_millis(5 * i), &header(i, 5 * i), &ctx);
        }
        for i in (0..10).filter(|&i| i != 3) {
            let at = Instant::from_millis(5 * i + 40 + 2 * i);
            let ack = Ack {
                seq: i,
                arrival: at,
            };
            Sender::on_feedback(&mut s, at, &ack);
        }
        let [send, recv, rtt, ratio, gradient, loss, rate] = s.observation();
        assert!((send - 2400.0).abs() < 1e-9, "{send}");
        assert!(
            (recv - 9.0 * 1500.0 * 8.0 / 0.05 / 1e3).abs() < 1e-9,
            "{recv}"
        );
        // mean of 40 + 2i over i ≠ 3: 40 + 2·(45 − 3)/9
        let mean = 40.0 + 2.0 * 42.0 / 9.0;
        assert!((rtt - mean).abs() < 1e-9, "{rtt}");
        assert!((ratio - mean / 40.0).abs() < 1e-9, "{ratio}");
        assert!((gradient - 0.4).abs() < 1e-9, "{gradient}");
        assert!((loss - 0.1).abs() < 1e-12, "{loss}");
        assert_eq!(rate, 2400.0);
        // The next MI starts afresh: nothing sent or acknowledged, the last RTT kept.
        let [send, recv, rtt2, _, gradient, loss, _] = s.observation();
        assert_eq!((send, recv, gradient, loss), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(rtt2, rtt);
    }

    proptest! {
        #[test]
        fn acks_round_trip(seq in any::<u64>(), ns in any::<u64>()) {
            let a = Ack { seq, arrival: Instant::from_nanos(ns) };
            let mut out = vec![];
            a.emit(&mut out);
            prop_assert_eq!(Ack::parse(&out), Ok(a));
        }

        #[test]
        fn parsing_an_ack_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = Ack::parse(&buf);
        }
    }
}
