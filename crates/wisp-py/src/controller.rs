//! Controllers written in Python: a `wisp.Sender` / `wisp.Receiver` pair runs in the simulator
//! through the scheme seam's run-time variant (`SchemeConfig::Custom`), like any scheme
//! registered from outside wisp-core (`docs/adding-a-scheme.md`).
//!
//! The Python halves see the Rust contract with Python types: times are `float` seconds since
//! the start of the run (`Instant` nanoseconds / 1e9; a time the controller returns is rounded
//! to the nanosecond), rates `float` kbit/s, sizes `int` bytes. The scheme's feedback message is
//! `bytes` (carried in one framed message of kind 200, so it costs the reverse path its length
//! plus the 3-byte frame header), its per-packet header fields `bytes` of at most 16 (one RTP
//! header extension element, as for every scheme). The message and field types and the seam's
//! conversions ([`secs`], [`instant_of`], [`rate_of`]) are wisp-core's
//! ([`wisp_core::scheme::opaque`]); the Rust twin of the Python example
//! ([`wisp_core::scheme::example_aimd`]) uses the same ones, so the two run the same arithmetic.
//!
//! A callback that raises, or returns what the contract does not allow, stops the controller:
//! the error is kept (the first one), the flow's halves stop calling Python (the sender's
//! allowance becomes an empty window, its timers stop), the run finishes quickly, and `wisp.run`
//! raises `wisp.ControllerError` naming the class, the callback, the simulated time and the
//! problem, with the Python exception as its `__cause__`. Ctrl-C is checked every 4096 callbacks
//! and stops the run the same way; a `KeyboardInterrupt` or `SystemExit` raised inside a hook
//! stops it as itself (it is not the controller's failure). Busy loops that would never let
//! simulated time pass are errors too: a timer served 1000 times within 1 µs, an unpaced
//! non-empty `Window` granted 100,000 times at one instant (a sender that never counts what it
//! sent), 10,000 feedback messages at one instant (a `poll_feedback` that never returns `None`).
//!
//! Deviations from the Rust contract: no `poll_extra` (a Python sender cannot send packets
//! outside its allowance), no `delay_target`; `stats()` reports the target rate of the last
//! `Rate` allowance. The traffic source is always a backlogged bulk source of MTU-sized packets.
//! A hook a class does not override is not called at all (`on_time`, `poll_timeout`, …), so the
//! seam costs only the callbacks a controller defines.

use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use pyo3::{create_exception, intern};
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use wisp_core::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use wisp_core::pacer::Pacer;
use wisp_core::packet::{DataHeader, SchemeFields};
use wisp_core::scheme::example_aimd::AimdConfig;
use wisp_core::scheme::opaque::{
    MAX_FEEDBACK, MAX_KBPS, OpaqueFields as PyFields, OpaqueMessage as PyMessage, instant_of,
    rate_of, secs,
};
use wisp_core::scheme::params::Parameters;
use wisp_core::scheme::{
    Built, CustomScheme, Halves, ParamError, Scheme, SchemeConfig, SchemeContext, SchemeInfo,
};
use wisp_core::source::Source;
use wisp_core::{Bitrate, DataSize, Instant};

create_exception!(
    _wisp,
    ControllerError,
    PyRuntimeError,
    "A controller written in Python raised, or returned what the contract does not allow."
);

/// `wisp.Rate(kbps, pacing_kbps=None)`: send at `kbps`, paced at `pacing_kbps` (default: the
/// same).
#[pyclass(frozen, module = "wisp._wisp", name = "Rate")]
#[derive(Clone, Copy, Debug)]
pub struct PyRate {
    #[pyo3(get)]
    kbps: f64,
    #[pyo3(get)]
    pacing_kbps: f64,
}

#[pymethods]
impl PyRate {
    /// Checks the rates (finite, 0 to 1e8 kbit/s) here, where the mistake is, rather than
    /// when the allowance is used.
    #[new]
    #[pyo3(signature = (kbps, pacing_kbps=None))]
    fn new(kbps: f64, pacing_kbps: Option<f64>) -> PyResult<Self> {
        let kbps = checked_kbps("Rate", "kbps", kbps)?;
        let pacing_kbps = checked_kbps("Rate", "pacing_kbps", pacing_kbps.unwrap_or(kbps))?;
        Ok(PyRate { kbps, pacing_kbps })
    }
    fn __repr__(&self) -> String {
        format!("Rate({}, pacing_kbps={})", self.kbps, self.pacing_kbps)
    }
}

fn checked_kbps(class: &str, name: &str, kbps: f64) -> PyResult<f64> {
    if rate_of(kbps).is_none() {
        return Err(PyValueError::new_err(format!(
            "{class}: {name} {kbps} is not a rate in kbit/s (0 to 1e8)"
        )));
    }
    Ok(kbps)
}

/// `wisp.Window(bytes, pacing_kbps=None)`: `bytes` more may be sent now, paced at
/// `pacing_kbps` if given (else back to back).
#[pyclass(frozen, module = "wisp._wisp", name = "Window")]
#[derive(Clone, Copy, Debug)]
pub struct PyWindow {
    #[pyo3(get)]
    bytes: u64,
    #[pyo3(get)]
    pacing_kbps: Option<f64>,
}

#[pymethods]
impl PyWindow {
    /// Checks `bytes` (0 to 2^64 - 1) and the pacing rate (finite, 0 to 1e8 kbit/s).
    #[new]
    #[pyo3(signature = (bytes, pacing_kbps=None))]
    fn new(bytes: i128, pacing_kbps: Option<f64>) -> PyResult<Self> {
        let bytes = u64::try_from(bytes).map_err(|_| {
            PyValueError::new_err(format!("Window: bytes {bytes} is not 0 to 2**64 - 1"))
        })?;
        let pacing_kbps = pacing_kbps
            .map(|p| checked_kbps("Window", "pacing_kbps", p))
            .transpose()?;
        Ok(PyWindow { bytes, pacing_kbps })
    }
    fn __repr__(&self) -> String {
        format!("Window({}, pacing_kbps={:?})", self.bytes, self.pacing_kbps)
    }
}

/// `wisp.Packet`: what a controller is told of a data packet.
#[pyclass(frozen, module = "wisp._wisp", name = "Packet")]
#[derive(Debug)]
pub struct PyPacket {
    /// Per-flow sequence number, from 0.
    #[pyo3(get)]
    seq: u64,
    /// Bytes of the flow sent before this packet.
    #[pyo3(get)]
    byte_seq: u64,
    /// When it was sent, seconds.
    #[pyo3(get)]
    send_time: f64,
    /// Wire size, bytes.
    #[pyo3(get)]
    size: u64,
}

#[pymethods]
impl PyPacket {
    fn __repr__(&self) -> String {
        format!(
            "Packet(seq={}, byte_seq={}, send_time={}, size={})",
            self.seq, self.byte_seq, self.send_time, self.size
        )
    }
}

fn packet(p: &DataHeader) -> PyPacket {
    PyPacket {
        seq: p.seq,
        byte_seq: p.byte_seq,
        send_time: secs(p.send_time),
        size: p.size.bytes(),
    }
}

/// How often, at most, a run of Python controllers runs Python's signal handlers.
const SIGNAL_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// What the halves of one run share: the first error, a count of callbacks, and when Python's
/// signal handlers last ran.
#[derive(Debug, Default)]
pub struct Shared {
    error: Mutex<Option<PyErr>>,
    failed: AtomicBool,
    calls: AtomicU64,
    /// When Python's signal handlers last ran (`None`: not yet).
    signals_checked: Mutex<Option<std::time::Instant>>,
}

impl Shared {
    fn fail(&self, e: PyErr) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
        self.failed.store(true, Ordering::Relaxed);
    }

    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Whether [`SIGNAL_INTERVAL`] has passed since the signal handlers last ran (and if so,
    /// now counts as their last run).
    fn signals_due(&self) -> bool {
        let now = std::time::Instant::now();
        let mut last = self
            .signals_checked
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match *last {
            Some(t) if now.duration_since(t) < SIGNAL_INTERVAL => false,
            _ => {
                *last = Some(now);
                true
            }
        }
    }

    /// The first error, if any.
    pub fn take_error(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Python callbacks made so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// The name of a class, kept for the life of the process (a scheme's name is `&'static str`;
/// each distinct name is stored once).
fn intern_name(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(n) = set.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// One Python half: the object, its class name, the hooks it overrides, and the run's shared
/// state.
struct Half {
    obj: Py<PyAny>,
    class: String,
    hooks: Vec<String>,
    shared: Arc<Shared>,
    /// The latest time a callback was told (for messages).
    now: Cell<Instant>,
    /// The last `on_timeout` instant and how many times in a row it was called at it.
    fired: Cell<(Instant, u32)>,
}

/// `on_timeout` calls in a row, each less than [`BUSY_GAP`] after the last, that make a busy
/// loop.
const BUSY_LOOP: u32 = 1000;
const BUSY_GAP: wisp_core::Duration = wisp_core::Duration::from_micros(1);

/// Unpaced, non-empty `Window` allowances at one instant that make a busy loop (a sender that
/// never counts what it sent would otherwise send without end at that instant, until memory
/// runs out): 100,000 full-size packets, 150 MB.
const BUSY_SEND: u32 = 100_000;

/// Feedback messages returned at one instant that make a busy loop (a `poll_feedback` that
/// never returns `None`).
const BUSY_FEEDBACK: u32 = 10_000;

/// The smallest report interval of the example's Rust twin (a smaller one floods the reverse
/// path; 0 never lets time pass).
const MIN_INTERVAL_S: f64 = 0.001;

/// Counts calls at one instant: `(instant, calls in a row at it)` after this one.
fn again(cell: &Cell<(Instant, u32)>, now: Instant) -> u32 {
    let (at, n) = cell.get();
    let n = if at == now { n + 1 } else { 0 };
    cell.set((now, n));
    n
}

impl fmt::Debug for Half {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Python)", self.class)
    }
}

impl Half {
    fn has(&self, hook: &str) -> bool {
        self.hooks.iter().any(|h| h == hook)
    }

    /// Whether Python may be called (no error so far); counts the call and runs Python's signal
    /// handlers (Ctrl-C) at most every [`SIGNAL_INTERVAL`] of wall time, the clock read every
    /// 16 calls (a hook that takes a millisecond made a count of calls seconds late).
    fn live(&self, py: Python<'_>) -> bool {
        if self.shared.failed() {
            return false;
        }
        let n = self.shared.calls.fetch_add(1, Ordering::Relaxed);
        if n & 0xF == 0 && self.shared.signals_due() {
            if let Err(e) = py.check_signals() {
                self.shared.fail(e);
                return false;
            }
        }
        true
    }

    fn raised(&self, py: Python<'_>, hook: &str, now: Option<Instant>, e: PyErr) {
        // KeyboardInterrupt (Ctrl-C while Python runs a hook), SystemExit, …: not the
        // controller's failure, so they stop the run as themselves.
        if !e.is_instance_of::<PyException>(py) {
            self.shared.fail(e);
            return;
        }
        let at = now.map_or(String::new(), |t| format!(" at t={:.6} s", secs(t)));
        let what = e
            .get_type(py)
            .qualname()
            .map_or_else(|_| "an exception".to_string(), |n| n.to_string());
        let err = ControllerError::new_err(format!(
            "{}.{hook}{at} raised {what}: {}",
            self.class,
            e.value(py)
        ));
        err.set_cause(py, Some(e));
        self.shared.fail(err);
    }

    fn garbage(&self, hook: &str, now: Option<Instant>, got: &Bound<'_, PyAny>, expected: &str) {
        let at = now.map_or(String::new(), |t| format!(" at t={:.6} s", secs(t)));
        let shown = got
            .repr()
            .map_or_else(|_| "?".to_string(), |r| r.to_string());
        let ty = got
            .get_type()
            .qualname()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        self.shared.fail(ControllerError::new_err(format!(
            "{}.{hook}{at} returned {shown} ({ty}): expected {expected}",
            self.class
        )));
    }

    /// Calls `hook(*args)`; `None` if it raised (the error is kept).
    fn call<'py>(
        &self,
        py: Python<'py>,
        hook: &Bound<'py, PyString>,
        now: Option<Instant>,
        args: impl pyo3::call::PyCallArgs<'py>,
    ) -> Option<Bound<'py, PyAny>> {
        if let Some(t) = now {
            self.now.set(t);
        }
        match self.obj.bind(py).call_method1(hook, args) {
            Ok(v) => Some(v),
            Err(e) => {
                self.raised(py, hook.to_str().unwrap_or("?"), now, e);
                None
            }
        }
    }

    /// `poll_timeout()`: `None` or a time (one in the past fires at once, as in Rust).
    fn poll_timeout(&self) -> Option<Instant> {
        if !self.has("poll_timeout") {
            return None;
        }
        Python::with_gil(|py| {
            if !self.live(py) {
                return None;
            }
            let v = self.call(py, intern!(py, "poll_timeout"), None, ())?;
            if v.is_none() {
                return None;
            }
            let expected = "None or a time in seconds (finite, not negative)";
            match v.extract::<f64>().ok().and_then(instant_of) {
                Some(t) => Some(t),
                None => {
                    self.garbage("poll_timeout", Some(self.now.get()), &v, expected);
                    None
                }
            }
        })
    }

    fn on_timeout(&mut self, now: Instant) {
        // The simulator wakes a half whose timer is not in the future 1 ns later: a timer left
        // in the past is a busy loop that would crawl through time.
        let (at, n) = self.fired.get();
        let n = if at != Instant::MAX && now.saturating_duration_since(at) < BUSY_GAP {
            n + 1
        } else {
            0
        };
        self.fired.set((now, n));
        if n >= BUSY_LOOP {
            self.shared.fail(ControllerError::new_err(format!(
                "{}.poll_timeout at t={:.6} s: woken {BUSY_LOOP} times in a row less than 1 µs \
                 apart (a busy loop): return a time after the one just served, or None",
                self.class,
                secs(now)
            )));
            return;
        }
        if !self.has("on_timeout") {
            return;
        }
        Python::with_gil(|py| {
            if self.live(py) {
                self.call(py, intern!(py, "on_timeout"), Some(now), (secs(now),));
            }
        });
    }
}

/// The sending half of a Python scheme.
#[derive(Debug)]
pub struct PySender {
    half: Half,
    last_rate: Cell<Option<Bitrate>>,
    /// Unpaced non-empty windows granted at one instant ([`BUSY_SEND`]).
    granted: Cell<(Instant, u32)>,
}

impl Sender for PySender {
    type Feedback = PyMessage;
    type Fields = PyFields;

    fn on_packet_sent(&mut self, now: Instant, p: &DataHeader, _: &SendContext) -> PyFields {
        if !self.half.has("on_packet_sent") {
            return PyFields::default();
        }
        Python::with_gil(|py| {
            let h = &self.half;
            if !h.live(py) {
                return PyFields::default();
            }
            let Some(v) = h.call(
                py,
                intern!(py, "on_packet_sent"),
                Some(now),
                (secs(now), packet(p)),
            ) else {
                return PyFields::default();
            };
            if v.is_none() {
                return PyFields::default();
            }
            match v
                .downcast::<PyBytes>()
                .ok()
                .and_then(|b| SchemeFields::new(b.as_bytes()))
            {
                Some(f) => PyFields(f),
                None => {
                    h.garbage(
                        "on_packet_sent",
                        Some(now),
                        &v,
                        "None or bytes of at most 16 (the packet's header fields)",
                    );
                    PyFields::default()
                }
            }
        })
    }

    fn on_feedback(&mut self, now: Instant, m: &PyMessage) {
        Python::with_gil(|py| {
            if self.half.live(py) {
                let body = PyBytes::new(py, &m.0);
                self.half
                    .call(py, intern!(py, "on_feedback"), Some(now), (secs(now), body));
            }
        });
    }

    fn on_time(&mut self, now: Instant) {
        if !self.half.has("on_time") {
            return;
        }
        Python::with_gil(|py| {
            if self.half.live(py) {
                self.half
                    .call(py, intern!(py, "on_time"), Some(now), (secs(now),));
            }
        });
    }

    fn allowance(&self, now: Instant) -> Allowance {
        let stop = Allowance::Window {
            bytes: DataSize::ZERO,
            pacing: None,
        };
        Python::with_gil(|py| {
            let h = &self.half;
            if !h.live(py) {
                return stop;
            }
            let Some(v) = h.call(py, intern!(py, "allowance"), Some(now), (secs(now),)) else {
                return stop;
            };
            let a = if let Ok(r) = v.downcast::<PyRate>() {
                let r = r.get();
                rate_of(r.kbps)
                    .zip(rate_of(r.pacing_kbps))
                    .map(|(target, pacing)| Allowance::Rate { target, pacing })
            } else if let Ok(w) = v.downcast::<PyWindow>() {
                let w = w.get();
                match w.pacing_kbps.map(rate_of) {
                    Some(None) => None,
                    pacing => Some(Allowance::Window {
                        bytes: DataSize::from_bytes(w.bytes),
                        pacing: pacing.flatten(),
                    }),
                }
            } else if v.is_instance_of::<pyo3::types::PyBool>() {
                None
            } else {
                v.extract::<f64>()
                    .ok()
                    .and_then(rate_of)
                    .map(|r| Allowance::Rate {
                        target: r,
                        pacing: r,
                    })
            };
            match a {
                Some(Allowance::Window {
                    bytes,
                    pacing: None,
                }) if bytes.bytes() > 0 && again(&self.granted, now) >= BUSY_SEND => {
                    h.shared.fail(ControllerError::new_err(format!(
                        "{}.allowance at t={:.6} s: granted an unpaced window {BUSY_SEND} times \
                         at this instant (a busy loop): a Window must shrink as packets leave \
                         (count them in on_packet_sent), or give pacing_kbps",
                        h.class,
                        secs(now)
                    )));
                    stop
                }
                Some(a) => {
                    if let Allowance::Rate { target, .. } = a {
                        self.last_rate.set(Some(target));
                    }
                    a
                }
                None => {
                    h.garbage(
                        "allowance",
                        Some(now),
                        &v,
                        "a rate in kbit/s (0 to 1e8), wisp.Rate or wisp.Window",
                    );
                    stop
                }
            }
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.half.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant) {
        self.half.on_timeout(now);
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: self.last_rate.get(),
            window: None,
        }
    }
}

/// The receiving half of a Python scheme.
#[derive(Debug)]
pub struct PyReceiver {
    half: Half,
    /// Feedback messages returned at one instant ([`BUSY_FEEDBACK`]).
    polled: Cell<(Instant, u32)>,
}

impl Receiver for PyReceiver {
    type Feedback = PyMessage;
    type Fields = PyFields;

    fn on_packet_received(&mut self, now: Instant, p: &DataHeader, fields: &PyFields) {
        Python::with_gil(|py| {
            if self.half.live(py) {
                let f = PyBytes::new(py, fields.0.as_slice());
                self.half.call(
                    py,
                    intern!(py, "on_packet_received"),
                    Some(now),
                    (secs(now), packet(p), f),
                );
            }
        });
    }

    fn poll_feedback(&mut self, now: Instant) -> Option<PyMessage> {
        if !self.half.has("poll_feedback") {
            return None;
        }
        Python::with_gil(|py| {
            let h = &self.half;
            if !h.live(py) {
                return None;
            }
            let v = h.call(py, intern!(py, "poll_feedback"), Some(now), (secs(now),))?;
            if v.is_none() {
                return None;
            }
            match v.downcast::<PyBytes>() {
                Ok(b) if b.as_bytes().len() <= MAX_FEEDBACK => {
                    if again(&self.polled, now) >= BUSY_FEEDBACK {
                        h.shared.fail(ControllerError::new_err(format!(
                            "{}.poll_feedback at t={:.6} s: returned {BUSY_FEEDBACK} messages at \
                             this instant (a busy loop): return None when nothing is due",
                            h.class,
                            secs(now)
                        )));
                        return None;
                    }
                    Some(PyMessage(b.as_bytes().to_vec()))
                }
                _ => {
                    h.garbage(
                        "poll_feedback",
                        Some(now),
                        &v,
                        "None or bytes of at most 1200 (a feedback message)",
                    );
                    None
                }
            }
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.half.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant) {
        self.half.on_timeout(now);
    }
}

/// A Python scheme's configuration: the factories of its halves (Python callables returning
/// `(object, class name, [overridden hooks])`) and the run's shared state.
pub struct PyScheme {
    name: &'static str,
    factories: Option<(Py<PyAny>, Py<PyAny>)>,
    shared: Arc<Shared>,
}

impl PyScheme {
    pub fn new(name: &str, sender: Py<PyAny>, receiver: Py<PyAny>, shared: Arc<Shared>) -> Self {
        PyScheme {
            name: intern_name(name),
            factories: Some((sender, receiver)),
            shared,
        }
    }

    /// As a scheme the simulator runs.
    pub fn config(self) -> SchemeConfig {
        SchemeConfig::Custom(CustomScheme::new(self))
    }

    fn make(&self, py: Python<'_>, factory: &Py<PyAny>, which: &str) -> Option<Half> {
        let made = factory
            .call0(py)
            .and_then(|v| v.extract::<(Py<PyAny>, String, Vec<String>)>(py));
        match made {
            Ok((obj, class, hooks)) => Some(Half {
                obj,
                class,
                hooks,
                shared: self.shared.clone(),
                now: Cell::new(Instant::ZERO),
                fired: Cell::new((Instant::MAX, 0)),
            }),
            Err(e) => {
                let err = ControllerError::new_err(format!(
                    "making the {which} of `{}` raised {}",
                    self.name,
                    e.value(py)
                ));
                err.set_cause(py, Some(e));
                self.shared.fail(err);
                None
            }
        }
    }
}

impl fmt::Debug for PyScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PyScheme({})", self.name)
    }
}

impl Clone for PyScheme {
    fn clone(&self) -> Self {
        PyScheme {
            name: self.name,
            factories: self
                .factories
                .as_ref()
                .map(|(s, r)| Python::with_gil(|py| (s.clone_ref(py), r.clone_ref(py)))),
            shared: self.shared.clone(),
        }
    }
}

impl PartialEq for PyScheme {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && match (&self.factories, &other.factories) {
                (Some((a, b)), Some((c, d))) => a.is(c) && b.is(d),
                (None, None) => true,
                _ => false,
            }
    }
}

impl Parameters for PyScheme {
    fn param_list(&self) -> Vec<(&'static str, String)> {
        vec![]
    }
    fn param_docs(&self) -> Vec<(String, String)> {
        vec![]
    }
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        wisp_core::scheme::params::no_params(
            self.name,
            given,
            "(none: a Python controller takes its parameters in Python)",
        )
    }
}

impl Scheme for PyScheme {
    type Sender = PySender;
    type Receiver = PyReceiver;
    const NAMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "python",
        summary: "a controller written in Python (wisp.Controller)",
    }];

    fn named(name: &str) -> Option<Self> {
        // Only `DynScheme::default_param_list` asks (for a scheme without parameters): a
        // configuration without factories, which builds inert halves.
        Some(PyScheme {
            name: intern_name(name),
            factories: None,
            shared: Arc::default(),
        })
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let mtu = ctx.mtu();
        let (sender, receiver) = Python::with_gil(|py| {
            let (s, r) = match &self.factories {
                Some((s, r)) => (self.make(py, s, "sender"), self.make(py, r, "receiver")),
                None => (None, None),
            };
            let inert = |py: Python<'_>| {
                self.shared.fail(ControllerError::new_err(format!(
                    "`{}` has no controller to build",
                    self.name
                )));
                Half {
                    obj: py.None(),
                    class: String::new(),
                    hooks: vec![],
                    shared: self.shared.clone(),
                    now: Cell::new(Instant::ZERO),
                    fired: Cell::new((Instant::MAX, 0)),
                }
            };
            (
                s.unwrap_or_else(|| inert(py)),
                r.unwrap_or_else(|| inert(py)),
            )
        });
        Ok(Halves {
            sender: PySender {
                half: sender,
                last_rate: Cell::new(None),
                granted: Cell::new((Instant::MAX, 0)),
            },
            receiver: PyReceiver {
                half: receiver,
                polled: Cell::new((Instant::MAX, 0)),
            },
            source: Source::bulk(mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

/// `wisp._wisp.Controller`: what `wisp.Controller` hands the native module — the factories of
/// a Python scheme's halves, or a Rust scheme (the example's twin).
#[pyclass(frozen, module = "wisp._wisp", name = "Controller")]
#[derive(Debug)]
pub struct PyController {
    pub name: String,
    pub kind: ControllerKind,
}

#[derive(Debug)]
pub enum ControllerKind {
    Python {
        sender: Py<PyAny>,
        receiver: Py<PyAny>,
    },
    Rust(SchemeConfig),
}

#[pymethods]
impl PyController {
    /// `sender()` and `receiver()` return `(object, class name, [overridden hooks])`.
    #[new]
    fn new(name: String, sender: Py<PyAny>, receiver: Py<PyAny>) -> Self {
        PyController {
            name,
            kind: ControllerKind::Python { sender, receiver },
        }
    }

    /// The Rust twin of `examples/aimd.py` (AIMD on delay), with its parameters.
    #[staticmethod]
    #[pyo3(signature = (start_kbps=300.0, target_s=0.040, beta=0.85, step_kbps=50.0, interval_s=0.050))]
    fn rust_example_aimd(
        start_kbps: f64,
        target_s: f64,
        beta: f64,
        step_kbps: f64,
        interval_s: f64,
    ) -> PyResult<Self> {
        let check = |name: &str, v: f64, ok: bool, need: &str| {
            if v.is_finite() && ok {
                Ok(())
            } else {
                Err(PyValueError::new_err(format!(
                    "{name}: `{v}` is out of range (need {need})"
                )))
            }
        };
        check(
            "start_kbps",
            start_kbps,
            start_kbps > 0.0 && start_kbps <= MAX_KBPS,
            "0 < kbit/s <= 1e8",
        )?;
        check("target_s", target_s, target_s >= 0.0, "seconds >= 0")?;
        check("beta", beta, beta > 0.0 && beta <= 1.0, "0 < beta <= 1")?;
        check(
            "step_kbps",
            step_kbps,
            (0.0..=MAX_KBPS).contains(&step_kbps),
            "0 <= kbit/s <= 1e8",
        )?;
        check(
            "interval_s",
            interval_s,
            interval_s >= MIN_INTERVAL_S,
            "at least 0.001 s",
        )?;
        Ok(PyController {
            name: "example-aimd (Rust)".to_string(),
            kind: ControllerKind::Rust(SchemeConfig::Custom(CustomScheme::new(AimdConfig {
                start_kbps,
                target_s,
                beta,
                step_kbps,
                interval_s,
            }))),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("Controller({:?})", self.name)
    }
}

impl PyController {
    /// The scheme for one run, with the run's shared state, and whether it calls Python.
    pub fn scheme(&self, py: Python<'_>, shared: &Arc<Shared>) -> (SchemeConfig, bool) {
        match &self.kind {
            ControllerKind::Python { sender, receiver } => (
                PyScheme::new(
                    &self.name,
                    sender.clone_ref(py),
                    receiver.clone_ref(py),
                    shared.clone(),
                )
                .config(),
                true,
            ),
            ControllerKind::Rust(c) => (c.clone(), false),
        }
    }
}
