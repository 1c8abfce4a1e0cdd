"""wisp.run_grid: a grid of runs, locally and on a Dask cluster of two worker processes."""

from __future__ import annotations

import pandas as pd
import pytest

import wisp
from wisp._grid import expand

GRID = {
    "schemes": ["cbr:rate-kbps=2000", "gcc-remb"],
    "links": ["trace:traces/cellular/Verizon-LTE-short.down", "trace:traces/cellular/TMobile-LTE-short.down"],
    "seeds": range(1, 11),
    "duration_s": 5,
    "loss": 0.01,
}


def test_a_40_run_grid_on_a_local_dask_cluster_equals_the_local_one() -> None:
    distributed = pytest.importorskip("distributed")  # installed by scripts/test-python.sh
    local = wisp.run_grid(GRID)
    assert len(local) == 40
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as client:
        pids = set(client.run(lambda: __import__("os").getpid()).values())
        assert len(pids) == 2
        remote = wisp.run_grid(GRID, client=client)
    pd.testing.assert_frame_equal(local, remote, check_exact=True)


def test_rows_are_the_runs_of_the_grid_in_order() -> None:
    df = wisp.run_grid({**GRID, "seeds": [1, 2], "delay_ms": [20, 50]})
    # the run's arguments (the options in wisp._grid.OPTIONS order), then the metrics
    assert list(df.columns[:7]) == ["scheme", "link", "seed", "delay_ms", "loss", "duration_s", "window_start_s"]
    assert len(df) == 2 * 2 * 2 * 2
    runs = expand({**GRID, "seeds": [1, 2], "delay_ms": [20, 50]})
    assert [r["seed"] for r in runs] == list(df["seed"])
    assert [r["delay_ms"] for r in runs] == list(df["delay_ms"])
    # A row is wisp.run of its arguments.
    for i in (0, 5, 13):
        r = wisp.run(**runs[i])
        assert r.throughput_kbps == df["throughput_kbps"][i]
        assert r.packets_lost == df["packets_lost"][i]
    # The seed matters here (random loss), so equal frames above are not a constant.
    assert df["packets_lost"].nunique() > 1
    # The longer delay shows in the delay.
    d = df.groupby("delay_ms")["delay_p50_ms"].mean()
    assert d[50] > d[20] + 25


def test_bad_grids_and_bad_runs() -> None:
    with pytest.raises(ValueError, match="unknown key"):
        wisp.run_grid({**GRID, "sedes": [1]})
    with pytest.raises(ValueError, match="links"):
        wisp.run_grid({"schemes": ["gcc-remb"], "links": []})
    with pytest.raises(ValueError, match="unknown scheme `nope`"):
        wisp.run_grid({**GRID, "schemes": ["nope"]})


def test_run_results_as_pandas() -> None:
    r = wisp.run(scheme="gcc-remb", link="const:2mbps", duration_s=5, flows=2)
    df = r.to_pandas()
    assert len(df) == 2
    assert list(df["throughput_kbps"]) == [f["throughput_kbps"] for f in r.flows]
    assert (df["scheme"] == "gcc-remb").all()
    # A list of schemes: each row carries its flow's scheme, not the run's joined name.
    r = wisp.run(scheme=["gcc-remb", "cbr:rate-kbps=1000"], link="const:6mbps", duration_s=5)
    assert r.scheme == "gcc-remb+cbr:rate-kbps=1000"
    df = r.to_pandas()
    assert list(df["scheme"]) == ["gcc-remb", "cbr:rate-kbps=1000"]
    assert list(df.columns) == list(wisp.bench("cbr", "traces/cellular/Verizon-LTE-short.down", duration_s=1).columns)


def test_grids_with_nothing_to_vary_or_the_wrong_types() -> None:
    base = {"schemes": ["cbr"], "links": ["const:1mbps"], "duration_s": 1}
    with pytest.raises(ValueError, match="`loss` names nothing"):
        wisp.run_grid({**base, "loss": []})
    with pytest.raises(TypeError, match="seeds"):
        wisp.run_grid({**base, "seeds": [1.7]})  # was silently seed 1
    with pytest.raises(ValueError, match="seeds"):
        wisp.run_grid({**base, "seeds": [-1]})
    with pytest.raises(TypeError, match="scheme specs"):
        wisp.run_grid({**base, "schemes": [wisp.Controller.rust_example_aimd()]})


def test_a_reverse_trace_given_as_a_path_is_made_absolute_and_jobs_is_checked(monkeypatch) -> None:
    """A relative `reverse` path reaches the runs (on Dask: other processes, other folders)
    absolute, a pathlib.Path as well as a string."""
    from pathlib import Path

    import wisp._grid as grid_module

    seen = []
    real = grid_module._run_one
    monkeypatch.setattr(
        grid_module, "_run_one", lambda args, cancel=None: seen.append(args["reverse"]) or real(args, cancel)
    )
    rel = "traces/cellular/Verizon-LTE-short.up"
    grid = {"schemes": ["cbr"], "links": ["const:1mbps"], "duration_s": 1, "reverse": [rel, Path(rel)]}
    df = wisp.run_grid(grid, jobs=1)
    assert len(df) == 2 and len(seen) == 2
    assert all(isinstance(r, str) and Path(r).is_absolute() for r in seen), seen
    for jobs in (0, -1):
        with pytest.raises(ValueError, match="jobs"):
            wisp.run_grid(grid, jobs=jobs)
