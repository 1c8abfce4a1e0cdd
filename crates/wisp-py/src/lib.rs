//! # wisp-py
//!
//! The native half of the Python package `wisp` (module `wisp._wisp`): it parses the same specs
//! as the command line with wisp-sim's and wisp-core's parsers, runs the simulator with the GIL
//! released, and hands results back as JSON (the same serialisation as `wisp run --json` and
//! `wisp bench`'s results.json) and as columns of raw little-endian numbers, which the Python
//! half turns into numpy arrays and pandas DataFrames without a Python object per row.
//!
//! It holds no logic of its own: scenario building is [`wisp_sim::options::RunOptions`], the
//! matrix helpers are [`wisp_sim::bench`], the metrics are wisp-sim's, the report page is
//! wisp-report's, the reproductions are [`wisp_sim::reproduce`]'s (`src/reproduce.rs`). Bad input is a
//! `ValueError` carrying the parser's message (what the command line prints after the option's
//! name). Ctrl-C stops a run of built-in schemes at the engine's cancel point
//! ([`wisp_sim::sim::Cancel`]), where `wisp.run` runs Python's signal handlers.
//!
//! Controllers written in Python run through the scheme seam's run-time variant
//! (`src/controller.rs`: calling Python and checking what it returns; the seam's message types
//! and conversions are [`wisp_core::scheme::opaque`], the example's Rust twin is
//! [`wisp_core::scheme::example_aimd`]), and `wisp.gym` binds wisp-sim's monitor-interval
//! environment [`wisp_sim::interval`] (`src/gym.rs`).

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use wisp_core::scheme::SchemeConfig;
use wisp_core::{Duration, Instant};
use wisp_sim::link::{BYTES_PER_LINE, LinkModel, LinkSpec};
use wisp_sim::log::DropReason;
use wisp_sim::options::RunOptions;
use wisp_sim::run::{RunReport, RunResult};
use wisp_sim::scenario_file::{MAX_DELAY, MAX_DURATION};
use wisp_sim::sim::{FlowSpec, SimError};
use wisp_sim::trace::TraceUnit;

mod controller;
mod gym;
mod reproduce;

use controller::{ControllerError, PyController, Shared};

fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

/// `(name, numpy dtype, bytes)`: one column of a DataFrame.
type Column<'py> = (String, &'static str, Bound<'py, PyBytes>);

fn f64_column<'py>(py: Python<'py>, name: &str, values: impl Iterator<Item = f64>) -> Column<'py> {
    let bytes: Vec<u8> = values.flat_map(f64::to_le_bytes).collect();
    (name.to_string(), "<f8", PyBytes::new(py, &bytes))
}

fn u64_column<'py>(py: Python<'py>, name: &str, values: impl Iterator<Item = u64>) -> Column<'py> {
    let bytes: Vec<u8> = values.flat_map(u64::to_le_bytes).collect();
    (name.to_string(), "<u8", PyBytes::new(py, &bytes))
}

fn opt_ms(t: Option<Instant>) -> f64 {
    t.map_or(f64::NAN, Instant::as_millis_f64)
}

fn number(name: &str, v: f64) -> PyResult<f64> {
    if !v.is_finite() {
        return Err(value_error(format!("{name}: `{v}` is not a finite number")));
    }
    Ok(v)
}

fn non_negative(name: &str, v: f64) -> PyResult<f64> {
    if number(name, v)? < 0.0 {
        return Err(value_error(format!("{name}: must not be negative")));
    }
    Ok(v)
}

/// A time option given in `unit` (`"s"` or `"ms"`): finite, not negative, and at most `max`,
/// the simulator's own bound ([`wisp_sim::scenario_file::MAX_DURATION`] for a run's length
/// and warm-up, [`wisp_sim::scenario_file::MAX_DELAY`] for a delay), as the command line and
/// scenario files bound them. The message states the bound in the option's unit. (The
/// package used to allow 1.8e9 s: `duration_s=1e9` ran until memory ran out.)
fn time_option(name: &str, v: f64, unit: &str, max: Duration) -> PyResult<Duration> {
    non_negative(name, v)?;
    let (scale, max_v) = if unit == "ms" {
        (1e-3, max.as_millis_f64())
    } else {
        (1.0, max.as_secs_f64())
    };
    if v > max_v {
        return Err(value_error(format!(
            "{name}: {v:e} is too large (at most {max_v} {unit})"
        )));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

/// Bins `Trace.rate` may make (8 bytes each per column), as many as `wisp trace compare`
/// makes: a `bin_ms` too small for the trace used to abort the process on allocating them.
const MAX_BINS: f64 = wisp_sim::trace_compare::MAX_BINS as f64;

/// The run options of the keyword arguments shared by `run` and `bench`.
#[allow(clippy::too_many_arguments)]
fn run_options(
    delay_ms: f64,
    queue: Option<&str>,
    loss: Option<&str>,
    reverse_loss: Option<&str>,
    duration_s: Option<f64>,
    warmup_s: f64,
    timer_jitter_us: f64,
) -> PyResult<RunOptions> {
    let mut o = RunOptions {
        delay: time_option("delay_ms", delay_ms, "ms", MAX_DELAY)?,
        warmup: time_option("warmup_s", warmup_s, "s", MAX_DURATION)?,
        ..RunOptions::default()
    };
    if let Some(q) = queue {
        o.queue = q.parse().map_err(|e| value_error(format!("queue: {e}")))?;
    }
    if let Some(l) = loss {
        o.loss = l.parse().map_err(|e| value_error(format!("loss: {e}")))?;
    }
    if let Some(l) = reverse_loss {
        o.reverse_loss = l
            .parse()
            .map_err(|e| value_error(format!("reverse_loss: {e}")))?;
    }
    if let Some(d) = duration_s {
        let duration = time_option("duration_s", d, "s", MAX_DURATION)?;
        if duration.is_zero() {
            return Err(value_error("duration_s: must be positive"));
        }
        o.duration = Some(duration);
    }
    let jitter = number("timer_jitter_us", timer_jitter_us)?;
    if !(0.0..=1e6).contains(&jitter) {
        return Err(value_error("timer_jitter_us: must be 0 to 1000000 µs"));
    }
    o.timer_jitter = Duration::from_nanos((jitter * 1e3).round() as u64);
    Ok(o)
}

fn resolve_seed(seed: Option<u64>) -> PyResult<u64> {
    wisp_sim::seed::resolve_seed(seed)
        .map(|(s, _)| s)
        .map_err(value_error)
}

fn trace_link(path: &Path) -> PyResult<LinkModel> {
    LinkSpec::trace_file(path).load().map_err(value_error)
}

fn report_json(r: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(r).map_err(|e| PyOSError::new_err(format!("cannot serialise: {e}")))
}

/// The outcome of one run: its report, time series and per-packet log, kept in Rust until asked
/// for.
#[pyclass(frozen, module = "wisp._wisp", name = "RunOutput")]
struct RunOutput {
    result: RunResult,
    /// Python callbacks the run made (0 without a Python controller).
    #[pyo3(get)]
    callbacks: u64,
}

#[pymethods]
impl RunOutput {
    /// The report as one JSON object, exactly as `wisp run --json` prints it.
    fn report_json(&self) -> PyResult<String> {
        report_json(&self.result.report)
    }

    /// The time series as columns (`t_s`, `capacity_kbps`, then per flow `f{i}_send_kbps`,
    /// `f{i}_throughput_kbps`, `f{i}_delay_ms`, `f{i}_queue_delay_ms`, `f{i}_queue_delay_max_ms`;
    /// NaN where a bin had no delivery), as timeseries.csv has them.
    fn timeseries_columns<'py>(&self, py: Python<'py>) -> Vec<Column<'py>> {
        let s = &self.result.series;
        let nan = |v: &Option<f64>| v.unwrap_or(f64::NAN);
        let mut cols = vec![
            f64_column(py, "t_s", s.t_s.iter().copied()),
            f64_column(py, "capacity_kbps", s.capacity_kbps.iter().copied()),
        ];
        for (i, f) in s.flows.iter().enumerate() {
            cols.push(f64_column(
                py,
                &format!("f{i}_send_kbps"),
                f.send_kbps.iter().copied(),
            ));
            cols.push(f64_column(
                py,
                &format!("f{i}_throughput_kbps"),
                f.throughput_kbps.iter().copied(),
            ));
            cols.push(f64_column(
                py,
                &format!("f{i}_delay_ms"),
                f.delay_ms.iter().map(nan),
            ));
            cols.push(f64_column(
                py,
                &format!("f{i}_queue_delay_ms"),
                f.queue_delay_ms.iter().map(nan),
            ));
            cols.push(f64_column(
                py,
                &format!("f{i}_queue_delay_max_ms"),
                f.queue_delay_max_ms.iter().map(nan),
            ));
        }
        cols
    }

    /// The per-packet log as columns (`flow`, `seq`, `size`, `sent_ms`, `enqueued_ms`,
    /// `delivered_ms`, `dropped_ms`; NaN for what did not happen), as packets.csv has them, and
    /// the drop reasons as codes into `drop_reasons()` (a one-byte column `drop_reason`).
    fn packets_columns<'py>(&self, py: Python<'py>) -> Vec<Column<'py>> {
        let p = &self.result.log.packets;
        let reasons: Vec<u8> = p
            .iter()
            .map(|r| {
                DROP_REASONS
                    .iter()
                    .position(|&d| d == r.reason)
                    .unwrap_or(0) as u8
            })
            .collect();
        vec![
            u64_column(py, "flow", p.iter().map(|r| u64::from(r.flow))),
            u64_column(py, "seq", p.iter().map(|r| r.header.seq)),
            u64_column(py, "size", p.iter().map(|r| r.header.size.bytes())),
            f64_column(py, "sent_ms", p.iter().map(|r| r.sent().as_millis_f64())),
            f64_column(py, "enqueued_ms", p.iter().map(|r| opt_ms(r.enqueued))),
            f64_column(py, "delivered_ms", p.iter().map(|r| opt_ms(r.delivered))),
            f64_column(py, "dropped_ms", p.iter().map(|r| opt_ms(r.dropped))),
            ("drop_reason".to_string(), "u1", PyBytes::new(py, &reasons)),
        ]
    }

    /// The names of the `drop_reason` codes (code 0 is the empty name: not dropped).
    #[staticmethod]
    fn drop_reasons() -> Vec<&'static str> {
        DROP_REASONS.iter().map(|d| d.as_str()).collect()
    }

    /// The run's report page (report.html of `wisp run --out`).
    fn html(&self, py: Python<'_>) -> String {
        py.allow_threads(|| wisp_report::run_html(&self.result))
    }
}

const DROP_REASONS: [DropReason; 6] = [
    DropReason::None,
    DropReason::Loss,
    DropReason::Queue,
    DropReason::Aqm,
    DropReason::Discard,
    DropReason::Link,
];

/// Runs one scenario (see `wisp.run` for the arguments).
#[pyfunction]
#[pyo3(signature = (
    scheme, link, reverse=None, delay_ms=20.0, queue=None, loss=None, reverse_loss=None,
    duration_s=None, warmup_s=0.0, seed=None, timer_jitter_us=0.0, flows=1, cancel=None
))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scheme: &Bound<'_, PyAny>,
    link: &str,
    reverse: Option<PathBuf>,
    delay_ms: f64,
    queue: Option<&str>,
    loss: Option<&str>,
    reverse_loss: Option<&str>,
    duration_s: Option<f64>,
    warmup_s: f64,
    seed: Option<u64>,
    timer_jitter_us: f64,
    flows: u16,
    cancel: Option<PyRef<'_, CancelToken>>,
) -> PyResult<RunOutput> {
    let shared = Arc::new(Shared::default());
    // Set from another thread (`wisp.run_grid`'s, on Ctrl-C): the run stops at its next cancel point.
    let token = cancel.map_or_else(|| Arc::new(AtomicBool::new(false)), |c| c.0.clone());
    let (schemes, calls_python) = schemes_of(py, scheme, flows, &shared)?;
    let spec: LinkSpec = link.parse().map_err(value_error)?;
    let options = run_options(
        delay_ms,
        queue,
        loss,
        reverse_loss,
        duration_s,
        warmup_s,
        timer_jitter_us,
    )?;
    if flows == 0 {
        return Err(value_error("flows: must be at least 1"));
    }
    let seed = resolve_seed(seed)?;
    let flows: Vec<FlowSpec> = schemes.into_iter().map(FlowSpec::new).collect();
    // The simulated 802.11 medium (`wifi:…`): the flows go from the AP to station 1 and their
    // feedback back across the same medium, as `wisp run --link wifi:…`.
    let result = if let Some(w) = spec.medium() {
        if reverse.is_some() {
            return Err(value_error(
                "reverse: does not apply to a wifi link (the feedback crosses the medium)",
            ));
        }
        if queue.is_some() {
            return Err(value_error(
                "queue: does not apply to a wifi link (give the medium's queue=N in the spec)",
            ));
        }
        let duration = options.duration.unwrap_or(Duration::from_secs(60));
        if options.warmup >= duration {
            return Err(value_error("warmup_s: must be shorter than the run"));
        }
        guarded(py, calls_python, &shared, &token, |stop| {
            wisp_sim::run::run_wifi_or_cancel(w, &options, flows, seed, None, Some(stop))
        })?
    } else {
        let forward = spec.load().map_err(value_error)?;
        let reverse = reverse.as_deref().map(trace_link).transpose()?;
        options.check_window(&forward).map_err(value_error)?;
        let scenario = options.scenario(forward, reverse, flows, seed);
        guarded(py, calls_python, &shared, &token, |stop| {
            wisp_sim::run::run_or_cancel(&scenario, None, Some(stop))
        })?
    };
    if let Some(e) = shared.take_error() {
        return Err(e);
    }
    let result = result.map_err(|e| match e {
        RunError::Python(e) => e,
        RunError::Sim(e) => value_error(e),
    })?;
    Ok(RunOutput {
        result,
        callbacks: shared.calls(),
    })
}

/// `scheme` as `wisp.run` takes it (one scheme for every flow, or a list: one flow of each):
/// the schemes, and whether any is a Python controller (whose hooks need the GIL).
fn schemes_of(
    py: Python<'_>,
    scheme: &Bound<'_, PyAny>,
    flows: u16,
    shared: &Arc<Shared>,
) -> PyResult<(Vec<SchemeConfig>, bool)> {
    let given: Vec<Bound<'_, PyAny>> =
        if scheme.is_instance_of::<PyList>() || scheme.is_instance_of::<PyTuple>() {
            if flows != 1 {
                return Err(value_error(
                    "flows: a list of schemes gives one flow each; leave flows at 1",
                ));
            }
            let list: Vec<Bound<'_, PyAny>> = scheme.try_iter()?.collect::<PyResult<_>>()?;
            if list.is_empty() {
                return Err(value_error("scheme: the list names no scheme"));
            }
            list
        } else {
            vec![scheme.clone(); usize::from(flows)]
        };
    let mut calls_python = false;
    let mut schemes = Vec::with_capacity(given.len());
    for s in &given {
        if let Ok(c) = s.downcast::<PyController>() {
            let (config, python) = c.get().scheme(py, shared);
            calls_python |= python;
            schemes.push(config);
        } else {
            let spec: &str = s.extract().map_err(|_| {
                let ty = s
                    .get_type()
                    .qualname()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string());
                PyTypeError::new_err(format!(
                    "scheme: expected a spec string or a wisp.Controller (or a list of them), \
                     not {ty}"
                ))
            })?;
            schemes.push(spec.parse::<SchemeConfig>().map_err(value_error)?);
        }
    }
    Ok((schemes, calls_python))
}

/// Runs `run` with a cancel point that stops it on Ctrl-C (in the main thread), on `token`, or
/// once a Python hook failed. Built-in schemes run with the GIL released; a Python controller
/// needs the GIL at every callback, so the run keeps it and Python's signal handlers run at
/// the cancel point between the hooks' calls.
fn guarded(
    py: Python<'_>,
    calls_python: bool,
    shared: &Shared,
    token: &AtomicBool,
    run: impl FnOnce(&dyn Fn() -> bool) -> Result<RunResult, SimError> + Send,
) -> PyResult<Result<RunResult, RunError>> {
    let ctrl_c = CtrlC::new(py)?;
    let cancelled = || token.load(Ordering::Relaxed);
    Ok(if calls_python {
        let stop = || shared.failed() || cancelled() || ctrl_c.pressed();
        run(&stop).map_err(|e| ctrl_c.error(e))
    } else {
        py.allow_threads(|| {
            let stop = || cancelled() || ctrl_c.pressed();
            run(&stop)
        })
        .map_err(|e| ctrl_c.error(e))
    })
}

/// A flag that stops the runs given it (`wisp.run(..., _cancel=token)`) at their next cancel
/// point, from any thread: `wisp.run_grid` sets it on Ctrl-C, so that the runs its worker threads
/// have under way stop too (a worker thread never sees the signal itself).
#[pyclass(name = "CancelToken", module = "wisp._wisp", frozen)]
#[derive(Debug, Default)]
struct CancelToken(Arc<AtomicBool>);

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> Self {
        CancelToken::default()
    }
    /// Stops the runs given this token.
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Whether [`set`](CancelToken::set) was called.
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why a run ended without a result.
enum RunError {
    /// Ctrl-C (the exception of Python's signal handler: `KeyboardInterrupt`).
    Python(PyErr),
    Sim(SimError),
}

/// Ctrl-C during a run of built-in schemes, which runs with the GIL released: the engine's
/// cancel point ([`wisp_sim::sim::Cancel`], every few thousand events) asks [`CtrlC::pressed`],
/// which at most every [`CtrlC::INTERVAL`] of wall time takes the GIL and runs Python's signal
/// handlers (`Python::check_signals`). Only in the main thread, where Python runs its signal
/// handlers: elsewhere the check would take the GIL for nothing.
struct CtrlC {
    main_thread: bool,
    last: Mutex<std::time::Instant>,
    /// The handler's exception, once raised.
    error: Mutex<Option<PyErr>>,
}

impl CtrlC {
    /// Between two checks: a Ctrl-C is seen within this (plus a few thousand events and the
    /// wait for the GIL); the GIL is taken at most 20 times a second.
    const INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

    fn new(py: Python<'_>) -> PyResult<CtrlC> {
        let threading = py.import("threading")?;
        let current = threading.call_method0("current_thread")?;
        let main = threading.call_method0("main_thread")?;
        Ok(CtrlC {
            main_thread: current.is(&main),
            last: Mutex::new(std::time::Instant::now()),
            error: Mutex::new(None),
        })
    }

    /// Whether the run must stop: a signal handler raised (the exception is kept).
    fn pressed(&self) -> bool {
        if !self.main_thread {
            return false;
        }
        let now = std::time::Instant::now();
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if now.duration_since(*last) < Self::INTERVAL {
                return false;
            }
            *last = now;
        }
        match Python::with_gil(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                *self.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                true
            }
        }
    }

    /// The run's error: the handler's exception when it was cancelled by one.
    fn error(&self, e: SimError) -> RunError {
        match (
            &e,
            self.error.lock().unwrap_or_else(|p| p.into_inner()).take(),
        ) {
            (SimError::Cancelled, Some(py_err)) => RunError::Python(py_err),
            _ => RunError::Sim(e),
        }
    }
}

/// Runs every scheme over every trace (see `wisp.bench`); returns the reports as one JSON list,
/// as results.json of `wisp bench`.
#[pyfunction]
#[pyo3(signature = (
    schemes, traces, reverse="pair", delay_ms=20.0, queue=None, loss=None, reverse_loss=None,
    duration_s=None, warmup_s=0.0, seed=None, timer_jitter_us=0.0, jobs=None
))]
#[pyo3(name = "bench")]
#[allow(clippy::too_many_arguments)]
fn bench_runs(
    py: Python<'_>,
    schemes: Vec<String>,
    traces: Vec<String>,
    reverse: &str,
    delay_ms: f64,
    queue: Option<&str>,
    loss: Option<&str>,
    reverse_loss: Option<&str>,
    duration_s: Option<f64>,
    warmup_s: f64,
    seed: Option<u64>,
    timer_jitter_us: f64,
    jobs: Option<usize>,
) -> PyResult<String> {
    let pair = match reverse {
        "pair" => true,
        "delay" => false,
        r => {
            return Err(value_error(format!(
                "reverse: `{r}` is neither `pair` nor `delay`"
            )));
        }
    };
    let schemes: Vec<SchemeConfig> = schemes
        .iter()
        .map(|s| s.parse().map_err(|e| value_error(format!("schemes: {e}"))))
        .collect::<Result<_, _>>()?;
    if schemes.is_empty() {
        return Err(value_error("schemes: names no scheme"));
    }
    let mut paths = vec![];
    for t in &traces {
        paths.extend(wisp_sim::bench::expand_traces(t).map_err(value_error)?);
    }
    if paths.is_empty() {
        return Err(value_error("traces: names no trace"));
    }
    let options = run_options(
        delay_ms,
        queue,
        loss,
        reverse_loss,
        duration_s,
        warmup_s,
        timer_jitter_us,
    )?;
    let mut scenarios = vec![];
    let seed = resolve_seed(seed)?;
    for p in &paths {
        let fwd = trace_link(p)?;
        let rev = match wisp_sim::bench::paired_trace(p) {
            Some(q) if pair => Some(trace_link(&q)?),
            _ => None,
        };
        options.check_window(&fwd).map_err(value_error)?;
        for s in &schemes {
            scenarios.push(options.scenario(
                fwd.clone(),
                rev.clone(),
                vec![FlowSpec::new(s.clone())],
                seed,
            ));
        }
    }
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let reports: Vec<RunReport> = interruptible(py, |cancel| {
        wisp_sim::bench::run_all_map_until(
            &scenarios,
            jobs,
            &|_, _, _| {},
            &|_, r| r.report,
            cancel,
        )
    })?
    .into_iter()
    .collect::<Result<_, _>>()
    .map_err(value_error)?;
    report_json(&reports)
}

/// Runs `work` on a thread of its own with the GIL released, checking for Ctrl-C every 50 ms:
/// on a signal's exception (KeyboardInterrupt) `work`'s cancel flag is set, its runs under way
/// finish, and the exception is returned. (A bench of minutes used to ignore Ctrl-C until its
/// end.) `work` returns `None` when cancelled.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> Option<T> + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        // Borrowed by the closures that release the GIL, which must be `Sync`.
        let rx = std::sync::Mutex::new(rx);
        let cancel = &cancel;
        let handle = s.spawn(move || {
            let r = work(cancel);
            drop(tx);
            r
        });
        let mut interrupted = None;
        loop {
            // `Disconnected`: the work ended (or panicked, which `join` passes on).
            let waiting = py.allow_threads(|| {
                let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
                matches!(
                    rx.recv_timeout(std::time::Duration::from_millis(50)),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                )
            });
            if !waiting {
                break;
            }
            if let Err(e) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                interrupted = Some(e);
                break;
            }
        }
        let r = py
            .allow_threads(|| handle.join())
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        match (interrupted, r) {
            (Some(e), _) => Err(e),
            (None, Some(r)) => Ok(r),
            (None, None) => Err(PyRuntimeError::new_err("the runs were cancelled")),
        }
    })
}

/// Splits a comma-separated list of scheme specs as `wisp bench --schemes` does
/// (`cbr:rate-kbps=2000,x=1,ideal` → `cbr:rate-kbps=2000,x=1`, `ideal`).
#[pyfunction]
fn split_schemes(list: &str) -> Vec<String> {
    wisp_sim::bench::split_schemes(list)
}

/// The built-in schemes: `(name, summary, [(key, default, help)])`; a default of `None`: the
/// parameter is unset unless given.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn schemes() -> Vec<(String, String, Vec<(String, Option<String>, String)>)> {
    wisp_core::scheme::schemes()
        .iter()
        .map(|s| (s.name.to_string(), s.summary.to_string(), s.parameters()))
        .collect()
}

/// A link trace (Mahimahi format; `.rx` files and `ns=True` read nanosecond timestamps).
#[pyclass(frozen, module = "wisp._wisp", name = "Trace")]
struct Trace {
    trace: Arc<wisp_sim::trace::Trace>,
}

#[pymethods]
impl Trace {
    #[staticmethod]
    #[pyo3(signature = (path, ns=false))]
    fn load(path: PathBuf, ns: bool) -> PyResult<Trace> {
        let unit = if ns {
            TraceUnit::Nanos
        } else {
            TraceUnit::for_path(&path)
        };
        let trace = wisp_sim::trace::Trace::load(&path, unit).map_err(value_error)?;
        Ok(Trace { trace })
    }

    /// The file name.
    #[getter]
    fn name(&self) -> String {
        self.trace.name().to_string()
    }

    /// `wisp trace stats --json`'s object for this trace, as JSON. The statistics count
    /// per second: a period longer than `wisp_sim::trace::MAX_STATS_PERIOD` (about 115 days)
    /// is a `ValueError` (a two-line trace ending at 1.8e13 ms aborted the interpreter
    /// allocating 147 GB).
    fn stats_json(&self) -> PyResult<String> {
        let max = wisp_sim::trace::MAX_STATS_PERIOD;
        if self.trace.period() > max {
            return Err(value_error(format!(
                "{}: the trace's period is {} s; its per-second statistics take at most {:.0} s",
                self.trace.name(),
                self.trace.period().as_secs_f64(),
                max.as_secs_f64()
            )));
        }
        report_json(&self.trace.stats(BYTES_PER_LINE))
    }

    /// The capacity over one period in bins of `bin_ms`: columns `t_s` (bin start) and
    /// `rate_kbps` (1500 bytes per line, as the simulator credits; the last bin may be partial).
    fn rate_columns<'py>(&self, py: Python<'py>, bin_ms: f64) -> PyResult<Vec<Column<'py>>> {
        if number("bin_ms", bin_ms)? <= 0.0 {
            return Err(value_error("bin_ms: must be positive"));
        }
        let bin = Duration::from_millis_f64(bin_ms);
        if bin.is_zero() {
            return Err(value_error("bin_ms: must be positive"));
        }
        let period = self.trace.period().as_secs_f64();
        let bins = period / bin.as_secs_f64();
        if bins > MAX_BINS {
            return Err(value_error(format!(
                "bin_ms: {bin_ms} ms makes {bins:.0} bins over the trace's {period} s (at most {MAX_BINS:.0})"
            )));
        }
        let link = LinkModel::from_trace(self.trace.clone());
        let end = Instant::ZERO + self.trace.period();
        let bytes = link.capacity_bins(Instant::ZERO, end, bin);
        let bin_s = bin.as_secs_f64();
        Ok(vec![
            f64_column(py, "t_s", (0..bytes.len()).map(|i| i as f64 * bin_s)),
            f64_column(py, "rate_kbps", bytes.iter().map(|b| b * 8.0 / bin_s / 1e3)),
        ])
    }

    fn __repr__(&self) -> String {
        format!(
            "Trace({:?}, lines={}, period_s={})",
            self.trace.name(),
            self.trace.lines(),
            self.trace.period().as_secs_f64()
        )
    }
}

/// The native half of the `wisp` package.
#[pymodule]
#[pyo3(name = "_wisp")]
fn wisp_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(bench_runs, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(split_schemes, m)?)?;
    m.add_class::<RunOutput>()?;
    m.add_class::<CancelToken>()?;
    m.add_class::<Trace>()?;
    m.add_class::<PyController>()?;
    m.add_class::<controller::PyRate>()?;
    m.add_class::<controller::PyWindow>()?;
    m.add_class::<controller::PyPacket>()?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce, m)?)?;
    m.add_class::<gym::PyRateControl>()?;
    m.add("ControllerError", m.py().get_type::<ControllerError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The simulator's bounds on a run's length (and warm-up) and on a delay.
    m.add("MAX_DURATION_S", MAX_DURATION.as_secs_f64())?;
    m.add("MAX_DELAY_MS", MAX_DELAY.as_millis_f64())?;
    m.add("PAPERS", wisp_report::reproduce::names(wisp_report::PAPERS))?;
    Ok(())
}
