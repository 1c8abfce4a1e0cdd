"""Sweeps: a grid of runs, locally in parallel or on a Dask cluster, as one DataFrame.

>>> df = wisp.run_grid({"schemes": ["sprout", "gcc"],
...                  "links": ["trace:traces/cellular/Verizon-LTE-short.down"],
...                  "seeds": range(1, 11), "loss": [0, 0.01]})           # doctest: +SKIP
>>> from dask.distributed import Client                                   # doctest: +SKIP
>>> df = wisp.run_grid(grid, client=Client("tcp://scheduler:8786"))           # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from . import RUN_OPTIONS

__all__ = ["expand", "run_grid"]

#: The options of :func:`wisp.run` a grid may set (one value, or a list to vary).
OPTIONS: tuple[str, ...] = RUN_OPTIONS + ("timer_jitter_us", "flows")

_TRACE_KINDS = ("trace:", "trace-ns:", "trace-packets:")


def _absolute_link(link: str) -> str:
    """A trace link with its file made absolute (from the current folder), so that a worker
    started elsewhere reads the same file from a shared path; other specs unchanged."""
    for kind in _TRACE_KINDS:
        if link.startswith(kind):
            return kind + os.path.abspath(link[len(kind):])
    return link


def _values(v: Any) -> list[Any]:
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        return [v]
    return list(v)


def expand(grid: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The runs of a grid, one dict of :func:`wisp.run`'s arguments each, in the order of the
    grid's rows: links outermost, then schemes, then each swept option (in ``OPTIONS`` order),
    then seeds."""
    import wisp

    unknown = set(grid) - {"schemes", "links", "seeds", *OPTIONS}
    if unknown:
        raise ValueError(
            f"grid: unknown key(s) {sorted(unknown)} (accepted: schemes, links, seeds, {', '.join(OPTIONS)})"
        )
    for key in ("schemes", "links"):
        if key not in grid or not _values(grid[key]):
            raise ValueError(f"grid: `{key}` names nothing")
    schemes = _values(grid["schemes"])
    for s in schemes:
        if not isinstance(s, str):
            raise TypeError(
                f"grid: `schemes` takes scheme specs (strings), not {type(s).__name__} "
                "(a wisp.Controller runs with wisp.run)"
            )
    links = [str(link) for link in _values(grid["links"])]
    seeds = [wisp._int("seeds", s, 0, wisp._SEED_MAX) for s in _values(grid.get("seeds", [1]))]
    if not seeds:
        raise ValueError("grid: `seeds` names nothing")
    swept = [k for k in OPTIONS if k in grid]
    for k in swept:
        if not _values(grid[k]):
            raise ValueError(f"grid: `{k}` names nothing (give a value, or leave it out)")
    runs = []
    for link, scheme in itertools.product(links, schemes):
        for combo in itertools.product(*(_values(grid[k]) for k in swept)):
            for seed in seeds:
                runs.append({"scheme": scheme, "link": link, "seed": seed, **dict(zip(swept, combo))})
    return runs


def _run_one(args: dict[str, Any], cancel: Any = None) -> dict[str, Any]:
    """One run of a grid (on a worker): its metrics (the first flow's). ``cancel``: a local
    grid's ``_wisp.CancelToken``, which stops the run when set."""
    import wisp

    r = wisp.run(**args, _cancel=cancel)
    return {k: r.flows[0][k] for k in wisp.METRICS}


def run_grid(
    grid: Mapping[str, Any], client: Any = None, jobs: int | None = None, output: str = "pandas"
) -> Any:
    """Runs every combination of a grid; returns one row per run.

    Args:
        grid: ``{"schemes": [...], "links": [...], "seeds": [...]}`` (specs as :func:`wisp.run`
            takes them; ``seeds`` defaults to ``[1]``), plus any option of :func:`wisp.run`
            (``delay_ms``, ``queue``, ``loss``, ``duration_s``, …): one value for every run, or a
            list to vary.
        client: a ``dask.distributed.Client``: one task per run is submitted to its cluster
            (the workers need the ``wisp`` package, and the trace files at the same absolute
            paths: a relative trace path is made absolute here). ``None``: the runs go to a local
            thread pool (each run releases the GIL).
        jobs: local runs in parallel (default: the number of cores); ignored with a client.
        output: ``"pandas"`` (a DataFrame) or ``"arrow"`` (a ``pyarrow.Table`` of the same
            columns; needs pyarrow, checked before anything runs).

    Returns:
        One row per run in :func:`expand`'s order: ``scheme``, ``link``, ``seed``, each option
        the grid sets, and the metrics (``throughput_kbps``, …; NaN where ``--json`` has
        ``null``). The figures depend only on the run's arguments, so a grid gives the same
        DataFrame wherever it runs.

    Raises:
        ValueError: a bad grid, or a run's bad input (the first, with the command line's message).
    """
    import wisp

    jobs = wisp._int("jobs", jobs, 1, wisp._JOBS_MAX)
    pa = wisp._output(output)
    runs = expand(grid)
    tasks = [{**r, "link": _absolute_link(r["link"])} for r in runs]
    for t in tasks:
        if isinstance(t.get("reverse"), (str, os.PathLike)):
            t["reverse"] = os.path.abspath(t["reverse"])
    if client is not None:
        futures = client.map(_run_one, tasks, pure=False)
        try:
            results = client.gather(futures)
        except BaseException:
            # Ctrl-C (or a run's error): the runs not yet started are not started.
            client.cancel(futures)
            raise
    else:
        workers = jobs or os.cpu_count() or 1
        # The worker threads never see Ctrl-C (Python runs signal handlers in the main thread,
        # which waits here): on KeyboardInterrupt, or a run's error, the token stops the runs
        # under way at their next cancel point and no further run starts.
        cancel = wisp._wisp.CancelToken()
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            results = list(pool.map(lambda t: _run_one(t, cancel), tasks))
        except BaseException:
            cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    columns: dict[str, Any] = {}
    for k in runs[0]:
        columns[k] = [r[k] for r in runs]
    for k in wisp.METRICS:
        values = [res[k] for res in results]
        if k in wisp._INT_METRICS:
            columns[k] = np.array(values, dtype=np.int64)
        else:
            columns[k] = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    df = pd.DataFrame(columns)
    return df if pa is None else wisp._arrow(df, pa)
