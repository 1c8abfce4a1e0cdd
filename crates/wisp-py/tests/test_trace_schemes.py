"""`wisp.Trace` and `wisp.schemes` equal `wisp trace stats --json` and `wisp schemes --json`."""

from __future__ import annotations

import numpy as np

import wisp
from conftest import cli_json


def test_trace_stats_equal_the_cli(cli) -> None:
    path = "traces/cellular/Verizon-LTE-short.down"
    t = wisp.Trace.load(path)
    assert t.name == "Verizon-LTE-short.down"
    assert t.stats() == cli_json(cli, "trace", "stats", path, "--json")["traces"][0]


def test_trace_rate_bins() -> None:
    t = wisp.Trace.load("traces/cellular/Verizon-LTE-short.down")
    stats = t.stats()
    r = t.rate(1000)
    assert list(r.columns) == ["t_s", "rate_kbps"]
    assert len(r) == round(stats["duration_s"])
    # The bins hold every line but the one at the period's end (140000 ms), which the link
    # delivers at the next period's start: one line's 12 kbit short over the 140 s.
    one_line_kbps = 1500 * 8 / 1000 / stats["duration_s"]
    assert abs(r.rate_kbps.mean() - stats["mean_mbps"] * 1000) <= one_line_kbps + 1e-9
    assert r.rate_kbps.max() == stats["max_1s_mbps"] * 1000
    fine = t.rate(100)
    assert len(fine) == 10 * len(r)
    # Ten 100-ms bins add up to their second.
    assert np.allclose(fine.rate_kbps.to_numpy().reshape(-1, 10).mean(axis=1), r.rate_kbps)


def test_schemes_equal_the_cli(cli) -> None:
    df = wisp.schemes()
    want = cli_json(cli, "schemes", "--json")["schemes"]
    assert list(df.name) == [s["name"] for s in want]
    assert list(df.summary) == [s["summary"] for s in want]
    for (_, row), s in zip(df.iterrows(), want):
        assert set(row.params) == {p["name"] for p in s["parameters"]}, s["name"]
        for p in s["parameters"]:
            assert row.params[p["name"]] == p["default"], (s["name"], p["name"])
            assert row.help[p["name"]] == p["doc"], (s["name"], p["name"])
    assert df[df.name == "cbr"].params.iloc[0] == {
        "rate-kbps": "1000",
        "rate": None,
        "packet-bytes": None,
    }
