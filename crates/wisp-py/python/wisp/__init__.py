"""wisp from Python: run the simulator, bench schemes over traces, inspect traces; controllers
written in Python (:class:`Controller`), a Gymnasium environment (:mod:`wisp.gym`), grids of runs
locally or on Dask (:func:`run_grid`), the papers' claims (:func:`reproduce`).

The specs are the command line's: ``scheme="sprout"`` or ``"cbr:rate-kbps=2000"`` as
``wisp run --scheme``, ``link="trace:traces/cellular/Verizon-LTE-short.down"`` or
``"const:12mbps"`` as ``wisp run --link``. Metrics carry the names of ``wisp run --json``.
Results come as pandas DataFrames built from whole columns (numpy arrays), never a Python
object per row. Bad input raises ``ValueError`` with the parser's message, as the command line
prints it.

>>> import wisp
>>> r = wisp.run(scheme="sprout", link="trace:traces/cellular/Verizon-LTE-short.down")
>>> r.throughput_kbps, r.delay_p95_ms            # doctest: +SKIP
>>> r.timeseries.plot(x="t_s", y=["capacity_kbps", "f0_throughput_kbps"])  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import operator
import os
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from . import _wisp
from .controller import Controller, ControllerError, Packet, Rate, Receiver, Sender, Window

__all__ = [
    "Controller",
    "ControllerError",
    "Packet",
    "Rate",
    "Receiver",
    "RunResult",
    "Sender",
    "Trace",
    "Window",
    "MAX_DELAY_MS",
    "MAX_DURATION_S",
    "PAPERS",
    "bench",
    "reproduce",
    "run",
    "schemes",
    "run_grid",
    "__version__",
]

__version__: str = _wisp.__version__

#: The longest run (``duration_s``) and warm-up (``warmup_s``), in seconds: the simulator's own
#: bound (``wisp_sim::scenario_file::MAX_DURATION``, a day), as ``wisp run --duration-s`` and
#: scenario files have it.
MAX_DURATION_S: float = _wisp.MAX_DURATION_S
#: The longest one-way delay (``delay_ms``), in ms: the simulator's own bound
#: (``wisp_sim::scenario_file::MAX_DELAY``, 60 s), as ``wisp run --delay-ms`` has it.
MAX_DELAY_MS: float = _wisp.MAX_DELAY_MS
#: The papers ``reproduce`` (and ``wisp reproduce``) knows, in the order ``wisp reproduce
#: --help`` lists them: wisp-report's registry (``wisp_report::PAPERS``).
PAPERS: tuple[str, ...] = tuple(_wisp.PAPERS)

#: The options of :func:`run` its report gives back, as ``wisp run --json`` names them.
RUN_OPTIONS: tuple[str, ...] = (
    "reverse",
    "delay_ms",
    "queue",
    "loss",
    "reverse_loss",
    "duration_s",
    "warmup_s",
)

#: The report's fields about the run, as ``wisp run --json`` names them.
REPORT_FIELDS: tuple[str, ...] = ("scheme", "trace", "seed") + RUN_OPTIONS

#: A flow's metrics, as ``wisp run --json`` names them (in its ``flows`` list).
METRICS: tuple[str, ...] = (
    "window_start_s",
    "window_end_s",
    "throughput_kbps",
    "capacity_kbps",
    "utilization",
    "delay_p50_ms",
    "delay_p95_ms",
    "queue_delay_p95_ms",
    "e2e_delay_p95_ms",
    "ideal_e2e_delay_p95_ms",
    "self_inflicted_delay_ms",
    "loss_rate",
    "packets_sent",
    "packets_delivered",
    "packets_lost",
)

_INT_METRICS = frozenset({"packets_sent", "packets_delivered", "packets_lost"})


def _int(name: str, value: Any, low: int, high: int) -> Any:
    """An integer argument checked as the command line checks its flag: ``None`` stays ``None``;
    a non-integer is a ``TypeError``, one out of ``low`` to ``high`` a ``ValueError``, both
    naming the argument (rather than the bare ``OverflowError`` of the conversion to Rust)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an integer, not bool")
    try:
        i = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, not {type(value).__name__}") from None
    if not low <= i <= high:
        raise ValueError(f"{name}: {i} is not in {low} to {high}")
    return i


_SEED_MAX = 2**64 - 1
#: As the command line's ``--jobs`` (1 to 65535) and ``--flows``.
_JOBS_MAX = 65535


def _pyarrow() -> Any:
    """pyarrow, an optional dependency: an ``ImportError`` that says how to install it."""
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(
            "wisp: Arrow output needs pyarrow, which is not installed: pip install pyarrow "
            "(or pip install 'wisp[arrow]')"
        ) from e
    return pyarrow


def _output(output: str) -> Any:
    """Checks an ``output`` argument (``"pandas"`` or ``"arrow"``) before any run starts; for
    ``"arrow"``, returns pyarrow (so that a missing pyarrow fails at once, not after the runs)."""
    if output == "pandas":
        return None
    if output == "arrow":
        return _pyarrow()
    raise ValueError(f"output: {output!r} is neither 'pandas' nor 'arrow'")


def _arrow(df: pd.DataFrame, pa: Any = None) -> Any:
    """A DataFrame as a ``pyarrow.Table``: the same columns in the same order (no index); a
    categorical column becomes a dictionary column. A column Arrow cannot type as it is (a
    grid's ``loss`` of ``0.01`` and ``"ge:p=0.1,r=0.5"``) becomes strings (``None`` stays
    null)."""
    pa = pa or _pyarrow()
    try:
        return pa.Table.from_pandas(df, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arrays = []
        for name in df.columns:
            try:
                arrays.append(pa.array(df[name], from_pandas=True))
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                arrays.append(pa.array([None if v is None else str(v) for v in df[name]], pa.string()))
        return pa.Table.from_arrays(arrays, names=[str(n) for n in df.columns])


def _frame(columns: Sequence[tuple[str, str, bytes]]) -> pd.DataFrame:
    """A DataFrame from ``(name, dtype, raw bytes)`` columns, one numpy array per column."""
    return pd.DataFrame(
        {name: np.frombuffer(raw, dtype=np.dtype(dtype)) for name, dtype, raw in columns}
    )


class RunResult:
    """The outcome of :func:`run`.

    The first flow's metrics are attributes (``throughput_kbps``, ``delay_p95_ms``,
    ``self_inflicted_delay_ms``, …; ``None`` where ``--json`` has ``null``), as are the run's
    fields (``scheme``, ``trace``, ``seed``, …). ``flows`` is every flow's metrics as dicts,
    ``as_dict()`` the whole ``--json`` object.
    """

    scheme: str
    trace: str
    seed: int
    reverse: str
    delay_ms: float
    queue: str
    loss: str
    reverse_loss: str
    duration_s: float
    warmup_s: float
    flows: list[dict[str, Any]]
    window_start_s: float
    window_end_s: float
    throughput_kbps: float
    capacity_kbps: float
    utilization: float
    delay_p50_ms: float | None
    delay_p95_ms: float | None
    queue_delay_p95_ms: float | None
    e2e_delay_p95_ms: float | None
    ideal_e2e_delay_p95_ms: float | None
    self_inflicted_delay_ms: float | None
    loss_rate: float
    packets_sent: int
    packets_delivered: int
    packets_lost: int

    def __init__(self, output: _wisp.RunOutput) -> None:
        self._output = output
        self._report: dict[str, Any] = json.loads(output.report_json())
        #: Python callbacks the run made (0 without a Python controller).
        self.callbacks: int = output.callbacks
        for k in REPORT_FIELDS:
            setattr(self, k, self._report[k])
        self.flows = self._report["flows"]
        for k in METRICS:
            setattr(self, k, self.flows[0][k])
        self._timeseries: pd.DataFrame | None = None
        self._packets: pd.DataFrame | None = None

    def to_pandas(self) -> pd.DataFrame:
        """One row per flow, in flow order: the run's fields and the flow's metrics (``bench``'s
        columns); ``scheme`` is the flow's own (``"gcc"``, not the run's ``"gcc+cbr"``)."""
        rows = [
            {**{k: self._report[k] for k in REPORT_FIELDS}, "scheme": f["scheme"], **{k: f[k] for k in METRICS}}
            for f in self.flows
        ]
        df = pd.DataFrame(rows)
        for k in METRICS:
            df[k] = df[k].astype(np.int64 if k in _INT_METRICS else np.float64)
        return df

    def to_arrow(self, table: str = "flows") -> Any:
        """A ``pyarrow.Table`` (pyarrow is optional: ``pip install pyarrow``): ``"flows"`` has
        :meth:`to_pandas`'s columns, ``"timeseries"`` and ``"packets"`` those of
        :attr:`timeseries` and :attr:`packets` (``drop_reason`` as a dictionary column).

        Raises:
            ImportError: pyarrow is not installed (the message says how to install it).
            ValueError: another ``table``.
        """
        frames = {"flows": self.to_pandas, "timeseries": lambda: self.timeseries, "packets": lambda: self.packets}
        if table not in frames:
            raise ValueError(f"table: {table!r} is not one of 'flows', 'timeseries', 'packets'")
        pa = _pyarrow()
        return _arrow(frames[table](), pa)

    def as_dict(self) -> dict[str, Any]:
        """The report, as ``wisp run --json`` prints it (a fresh copy)."""
        copy: dict[str, Any] = json.loads(json.dumps(self._report))
        return copy

    @property
    def timeseries(self) -> pd.DataFrame:
        """Per 100-ms bin: ``t_s``, ``capacity_kbps``, and per flow i ``f{i}_send_kbps``,
        ``f{i}_throughput_kbps``, ``f{i}_delay_ms``, ``f{i}_queue_delay_ms``,
        ``f{i}_queue_delay_max_ms`` (NaN where nothing was delivered): timeseries.csv of
        ``wisp run --out``."""
        if self._timeseries is None:
            self._timeseries = _frame(self._output.timeseries_columns())
        return self._timeseries

    @property
    def packets(self) -> pd.DataFrame:
        """Every data packet: ``flow``, ``seq``, ``size`` (bytes), ``sent_ms``, ``enqueued_ms``,
        ``delivered_ms``, ``dropped_ms`` (NaN for what did not happen) and ``drop_reason`` (a
        categorical; empty if not dropped): packets.csv of ``wisp run --out``."""
        if self._packets is None:
            cols = self._output.packets_columns()
            df = _frame([c for c in cols if c[0] != "drop_reason"])
            codes = next(np.frombuffer(raw, dtype=np.uint8) for n, _, raw in cols if n == "drop_reason")
            df["drop_reason"] = pd.Categorical.from_codes(
                codes.astype(np.int8), categories=_wisp.RunOutput.drop_reasons()
            )
            self._packets = df
        return self._packets

    def report(self, path: str | os.PathLike[str]) -> None:
        """Writes the run's HTML report page (report.html of ``wisp run --out``) to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self._output.html())

    def __repr__(self) -> str:
        def fmt(v: float | None) -> str:
            return "-" if v is None else f"{v:.0f}"

        return (
            f"<wisp.RunResult {self.scheme} on {self.trace}: {self.throughput_kbps:.0f} kbit/s, "
            f"delay p95 {fmt(self.delay_p95_ms)} ms, seed {self.seed}>"
        )


def _native_scheme(scheme: Any) -> Any:
    if isinstance(scheme, Controller):
        return scheme._native
    if isinstance(scheme, (list, tuple)):
        return [_native_scheme(s) for s in scheme]
    return scheme


def run(
    scheme: str | Controller | Sequence[str | Controller],
    link: str,
    reverse: str | os.PathLike[str] | None = None,
    delay_ms: float = 20.0,
    queue: str | None = None,
    loss: str | float | None = None,
    reverse_loss: str | float | None = None,
    duration_s: float | None = None,
    warmup_s: float = 0.0,
    seed: int | None = None,
    timer_jitter_us: float = 0.0,
    flows: int = 1,
    *,
    _cancel: Any = None,
) -> RunResult:
    """Simulates one scenario, as ``wisp run`` does.

    Args:
        scheme: ``NAME[:KEY=VALUE,…]`` (``wisp run --scheme``; see :func:`schemes`), or a
            :class:`Controller` written in Python; or a list of those: one flow of each,
            sharing the bottleneck (``flows`` must then stay 1).
        link: the data direction's link spec (``wisp run --link``): ``trace:FILE``,
            ``trace-ns:FILE``, ``trace-packets:FILE``, ``const:RATE``, ``steps:RATE@T,…``,
            ``wifi-outage[:…]``, ``wifi[:…]`` (the simulated 802.11 medium), ``3g-up``,
            ``wimax-down``, ``cable-up``, ``handover:…``.
        reverse: the feedback direction's trace file (``--reverse-trace``); ``None``: the
            propagation delay only.
        delay_ms: one-way propagation delay in each direction.
        queue: the bottleneck queue (``--queue``), default ``infinite``.
        loss: random loss at the bottleneck (``--loss``): a probability or ``ge:p=P,r=R``.
        reverse_loss: random loss of feedback (``--reverse-loss``).
        duration_s: simulated seconds (default: one period of the trace; 60 s otherwise).
        warmup_s: seconds at the start that metrics ignore.
        seed: the master seed (default: ``$WISP_SEED``, else 1).
        timer_jitter_us: wake each sender late by a random 0 to N µs (``--timer-jitter-us``).
        flows: flows of the scheme sharing the bottleneck.

    Raises:
        ValueError: bad input (an unknown scheme or parameter, a bad spec, a missing or
            malformed trace), with the message the command line prints; a number out of range
            (``seed`` 0 to 2**64 - 1, ``flows`` 1 to 65535, ``duration_s`` and ``warmup_s``
            at most a day, ``delay_ms`` at most 60 s: the simulator's bounds, as
            ``MAX_DURATION_S`` and ``MAX_DELAY_MS``), naming it.
        TypeError: an argument of the wrong type (a ``scheme`` neither a spec string nor a
            :class:`Controller`, a float ``seed`` or ``flows``), naming it.
        ControllerError: a :class:`Controller`'s hook raised or returned garbage, or looped
            without letting simulated time pass. ``KeyboardInterrupt`` and ``SystemExit``
            raised in a hook propagate as they are.

    The simulation runs with the GIL released (but for a Python controller, which needs it).
    Ctrl-C raises ``KeyboardInterrupt`` within a fraction of a second (the engine stops at its
    next cancel point, every few thousand events; when called in the main thread), also with a
    Python controller. ``_cancel`` (private; a ``_wisp.CancelToken``) stops the run from another
    thread, as :func:`run_grid` does on Ctrl-C.
    """
    return RunResult(
        _wisp.run(
            _native_scheme(scheme),
            link,
            reverse=None if reverse is None else os.fspath(reverse),
            delay_ms=float(delay_ms),
            queue=queue,
            loss=None if loss is None else str(loss),
            reverse_loss=None if reverse_loss is None else str(reverse_loss),
            duration_s=None if duration_s is None else float(duration_s),
            warmup_s=float(warmup_s),
            seed=_int("seed", seed, 0, _SEED_MAX),
            timer_jitter_us=float(timer_jitter_us),
            flows=_int("flows", flows, 1, _JOBS_MAX),
            cancel=_cancel,
        )
    )


def _listed(x: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    if isinstance(x, (str, os.PathLike)):
        return [os.fspath(x)]
    return [os.fspath(i) for i in x]


def bench(
    schemes: str | Iterable[str],
    traces: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    reverse: str = "pair",
    delay_ms: float = 20.0,
    queue: str | None = None,
    loss: str | float | None = None,
    reverse_loss: str | float | None = None,
    duration_s: float | None = None,
    warmup_s: float = 0.0,
    seed: int | None = None,
    timer_jitter_us: float = 0.0,
    jobs: int | None = None,
    output: str = "pandas",
) -> Any:
    """Runs every scheme over every trace, in parallel, as ``wisp bench`` does.

    Args:
        schemes: scheme specs, a list or one comma-separated string as ``--schemes``
            (``"cbr:rate-kbps=2000,ideal"``).
        traces: trace files or folders (a folder: every trace in it, in name order), a list or
            one comma-separated string as ``--traces``.
        reverse: ``"pair"`` (feedback over the paired ``.up``/``.down`` trace when it exists) or
            ``"delay"`` (the propagation delay only).
        jobs: runs in parallel (default: the number of cores).
        output: ``"pandas"`` (a DataFrame) or ``"arrow"`` (a ``pyarrow.Table`` of the same
            columns; needs pyarrow, checked before anything runs).
        The other arguments are :func:`run`'s.

    Ctrl-C raises ``KeyboardInterrupt`` once the runs under way end (no further run starts).

    Returns:
        One row per run, traces outer and schemes inner (results.json's order): the run's fields
        (``scheme``, ``trace``, ``seed``, …) and the flow's metrics (``throughput_kbps``, …; NaN
        where results.json has ``null``).

    Raises:
        ValueError: bad input, with the message the command line prints (``jobs``: 1 to 65535).
    """
    pa = _output(output)
    specs = _wisp.split_schemes(schemes) if isinstance(schemes, str) else list(schemes)
    trace_list = [t for item in _listed(traces) for t in item.split(",") if t.strip()]
    reports = json.loads(
        _wisp.bench(
            specs,
            trace_list,
            reverse=reverse,
            delay_ms=float(delay_ms),
            queue=queue,
            loss=None if loss is None else str(loss),
            reverse_loss=None if reverse_loss is None else str(reverse_loss),
            duration_s=None if duration_s is None else float(duration_s),
            warmup_s=float(warmup_s),
            seed=_int("seed", seed, 0, _SEED_MAX),
            timer_jitter_us=float(timer_jitter_us),
            jobs=_int("jobs", jobs, 1, _JOBS_MAX),
        )
    )
    columns: dict[str, Any] = {}
    for k in REPORT_FIELDS:
        columns[k] = [r[k] for r in reports]
    for k in METRICS:
        values = [r["flows"][0][k] for r in reports]
        if k in _INT_METRICS:
            columns[k] = np.array(values, dtype=np.int64)
        else:
            columns[k] = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    df = pd.DataFrame(columns)
    return df if pa is None else _arrow(df, pa)


def run_grid(grid: Any, client: Any = None, jobs: int | None = None, output: str = "pandas") -> Any:
    """Runs every combination of a grid, locally or on a Dask cluster: see :func:`wisp._grid.run_grid`
    (``output="arrow"``: a ``pyarrow.Table`` of the same columns)."""
    from ._grid import run_grid as _run_grid

    return _run_grid(grid, client=client, jobs=jobs, output=output)


def reproduce(
    paper: str,
    quick: bool = False,
    seed: int | None = None,
    jobs: int | None = None,
    trace: str | os.PathLike[str] | None = None,
    traces: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Re-runs a paper's experiments (``wisp reproduce PAPER``) and returns its claims.

    Ctrl-C (``KeyboardInterrupt``) stops it within a fraction of a second: the runs under way
    stop at the engine's cancel point, and nothing is written.

    Args:
        paper: one of ``PAPERS`` (the papers of ``wisp reproduce``: ``"gcc-wifi"``,
            ``"sprout"``, ``"mehrotra"``, ``"wbest"``, ``"kwikr"``, ``"alfalfa"``,
            ``"rmcat"``).
        quick: the shorter runs of ``--quick``.
        seed: the master seed (default: ``$WISP_SEED``, else 1).
        jobs: runs in parallel (default: the number of cores; wbest runs its cases one after
            another, as the command line does).
        trace: gcc-wifi's Wi-Fi trace (``--trace``; default: the shipped one).
        traces: sprout's and alfalfa's folder of cellular trace pairs (``--traces``; default:
            the shipped one).
        out: a folder to write the command line's output files into (``--out DIR``:
            summary.json, the CSV tables, report.html, figures/*.svg, byte for byte what
            ``wisp reproduce PAPER --out DIR`` writes), all of them or none; default: none
            written.

    Returns:
        One row per check, in the order the command line prints them: ``kind`` (``claim``, or
        ``calibration`` for mehrotra's checks of its calibration), ``scope`` (the trace or
        loss-table direction of a sprout check; empty otherwise), ``claim``, ``measured``,
        ``expected``, ``met``, ``status`` (``ok``, ``NO``, or ``n/a`` for a check that cannot
        fail on its data: the runs it compares are identical, the set it ranges over is empty;
        its ``met`` is False and it counts neither way) and ``not_applicable`` (why, for an
        ``n/a`` row; empty otherwise).

    Raises:
        ValueError: an unknown paper, a misplaced or unreadable trace, ``seed`` or ``jobs`` out
            of range, an ``out`` that cannot be a folder (a file, below a file, not writable),
            all before anything runs.
        OSError: writing into ``out`` failed (nothing is left half written).
        KeyboardInterrupt: Ctrl-C.
    """
    rows = _wisp.reproduce(
        paper,
        quick=quick,
        seed=_int("seed", seed, 0, _SEED_MAX),
        jobs=_int("jobs", jobs, 1, _JOBS_MAX),
        trace=None if trace is None else os.fspath(trace),
        traces=None if traces is None else os.fspath(traces),
        out=None if out is None else os.fspath(out),
    )
    return pd.DataFrame(
        {
            "kind": [r[0] for r in rows],
            "scope": [r[1] for r in rows],
            "claim": [r[2] for r in rows],
            "measured": [r[3] for r in rows],
            "expected": [r[4] for r in rows],
            "met": np.array([r[5] for r in rows], dtype=bool),
            "status": [("n/a" if r[6] else "ok" if r[5] else "NO") for r in rows],
            "not_applicable": [r[6] for r in rows],
        }
    )


def schemes() -> pd.DataFrame:
    """The built-in schemes (``wisp schemes``): one row per scheme with ``name``, ``summary`` and
    ``params``, a dict of each parameter's default as a spec string writes it (``None``: unset
    unless given), and ``help``, a dict of each parameter's help text."""
    rows = _wisp.schemes()
    return pd.DataFrame(
        {
            "name": [n for n, _, _ in rows],
            "summary": [s for _, s, _ in rows],
            "params": [{k: v for k, v, _ in p} for _, _, p in rows],
            "help": [{k: h for k, _, h in p} for _, _, p in rows],
        }
    )


class Trace:
    """A link trace (Mahimahi format: one line per 1500-byte delivery opportunity)."""

    def __init__(self, native: _wisp.Trace) -> None:
        self._native = native

    @staticmethod
    def load(path: str | os.PathLike[str], ns: bool = False) -> Trace:
        """Reads a trace file (``.rx`` files, and any with ``ns=True``, hold nanoseconds).

        Raises:
            ValueError: a missing or malformed file, naming the file (and line).
        """
        return Trace(_wisp.Trace.load(os.fspath(path), ns))

    @property
    def name(self) -> str:
        """The file name."""
        return self._native.name

    def stats(self) -> dict[str, Any]:
        """Duration, mean and 1-second percentile rates, outages: ``wisp trace stats --json``'s
        object for this trace. ``ValueError`` for a period of more than 10**7 s (the counts are
        per second)."""
        stats: dict[str, Any] = json.loads(self._native.stats_json())
        return stats

    def rate(self, bin_ms: float = 1000.0) -> pd.DataFrame:
        """The link's rate over one period in bins of ``bin_ms``: ``t_s`` (bin start) and
        ``rate_kbps`` (1500 bytes per line; the last bin may be partial). ``ValueError`` if
        ``bin_ms`` is not positive or makes more than 10**7 bins."""
        return _frame(self._native.rate_columns(float(bin_ms)))

    def __repr__(self) -> str:
        return repr(self._native)
