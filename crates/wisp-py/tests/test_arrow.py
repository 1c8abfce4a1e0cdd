"""Arrow output: `RunResult.to_arrow()`, `wisp.bench(..., output="arrow")` and
`wisp.run_grid(..., output="arrow")` give `pyarrow.Table`s with the DataFrames' columns; pyarrow is
optional, and its absence is an ImportError that says how to install it."""

from __future__ import annotations

import os
import sys

import pandas as pd
import pytest

import wisp

if os.environ.get("CI") == "true":
    import pyarrow as pa  # scripts/test-python.sh installs it: CI fails without it
else:
    pa = pytest.importorskip("pyarrow", reason="Arrow output needs pyarrow: pip install pyarrow")

TRACE = "traces/cellular/Verizon-LTE-short.down"


def _same(table, df: pd.DataFrame) -> None:
    assert isinstance(table, pa.Table)
    assert table.column_names == list(df.columns)
    assert table.num_rows == len(df)
    pd.testing.assert_frame_equal(table.to_pandas(), df, check_exact=True)


def test_a_runs_tables() -> None:
    r = wisp.run(scheme=["gcc-remb", "cbr:rate-kbps=1000"], link="const:4mbps", duration_s=10, loss=0.01)
    _same(r.to_arrow(), r.to_pandas())
    assert r.to_arrow().column("scheme").to_pylist() == ["gcc-remb", "cbr:rate-kbps=1000"]
    assert pa.types.is_int64(r.to_arrow().schema.field("packets_sent").type)
    _same(r.to_arrow("timeseries"), r.timeseries)
    packets = r.to_arrow("packets")
    _same(packets, r.packets)
    assert pa.types.is_dictionary(packets.schema.field("drop_reason").type)
    assert pa.types.is_float64(packets.schema.field("delivered_ms").type)
    # Figures a run of the command line also gives (the first flow's), not copies of pandas'.
    assert packets.column("flow").to_pylist().count(0) == r.packets_sent
    with pytest.raises(ValueError, match="table: 'nope'"):
        r.to_arrow("nope")


def test_bench_and_grid_as_arrow() -> None:
    kwargs = dict(duration_s=10, jobs=1)
    df = wisp.bench("cbr:rate-kbps=1000,gcc", TRACE, **kwargs)
    _same(wisp.bench("cbr:rate-kbps=1000,gcc", TRACE, output="arrow", **kwargs), df)
    grid = {"schemes": ["cbr", "gcc-remb"], "links": ["const:2mbps"], "seeds": [1, 2], "duration_s": 5,
            "loss": [0, 0.01]}
    sdf = wisp.run_grid(grid, jobs=1)
    _same(wisp.run_grid(grid, jobs=1, output="arrow"), sdf)
    with pytest.raises(ValueError, match="output: 'polars'"):
        wisp.bench("cbr", TRACE, output="polars")
    with pytest.raises(ValueError, match="output: 'polars'"):
        wisp.run_grid(grid, output="polars")


def test_a_column_of_mixed_types_becomes_strings() -> None:
    """A grid over `loss` given as a number and as a spec: pandas keeps an object column,
    Arrow has no such type, so the column becomes strings."""
    grid = {"schemes": "cbr", "links": "const:2mbps", "duration_s": 2, "loss": [0.01, "ge:p=0.1,r=0.5"]}
    t = wisp.run_grid(grid, jobs=1, output="arrow")
    assert t.column("loss").to_pylist() == ["0.01", "ge:p=0.1,r=0.5"]
    assert t.column("throughput_kbps").to_pylist() == list(wisp.run_grid(grid, jobs=1).throughput_kbps)


def test_without_pyarrow_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` raises ImportError
    r = wisp.run(scheme="cbr", link="const:1mbps", duration_s=1)
    with pytest.raises(ImportError, match="pip install pyarrow"):
        r.to_arrow()
    # Before any run starts.
    with pytest.raises(ImportError, match="pip install pyarrow"):
        wisp.bench("cbr", TRACE, output="arrow", duration_s=1)
    with pytest.raises(ImportError, match="pip install pyarrow"):
        wisp.run_grid({"schemes": "cbr", "links": "const:1mbps"}, output="arrow")
    # pandas output needs no pyarrow.
    assert len(r.to_pandas()) == 1
