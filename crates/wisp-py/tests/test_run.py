"""`wisp.run` gives what `wisp run` gives, to the bit."""

from __future__ import annotations

import csv
import math
import threading
import time

import numpy as np
import pandas as pd

import wisp
from conftest import cli_json

VERIZON = "traces/cellular/Verizon-LTE-short.down"


def test_sprout_throughput_equals_the_cli_figure(cli) -> None:
    r = wisp.run(scheme="sprout", link=f"trace:{VERIZON}")
    j = cli_json(cli, "run", "--scheme", "sprout", "--link", f"trace:{VERIZON}", "--json")
    print(f"sprout on Verizon-LTE-short.down: python {r.throughput_kbps!r}, "
          f"cli {j['flows'][0]['throughput_kbps']!r} kbit/s")
    assert r.throughput_kbps == j["flows"][0]["throughput_kbps"]
    # Every field of the report, not only the one figure.
    assert r.as_dict() == j
    assert r.self_inflicted_delay_ms == j["flows"][0]["self_inflicted_delay_ms"]
    assert r.seed == 1 and r.scheme == "sprout" and r.trace == "Verizon-LTE-short.down"


def test_options_reach_the_run_as_on_the_command_line(cli) -> None:
    r = wisp.run(
        scheme="cbr:rate-kbps=3000",
        link="const:2mbps",
        delay_ms=35,
        queue="droptail:packets=40",
        loss=0.01,
        duration_s=12,
        warmup_s=2,
        seed=7,
    )
    j = cli_json(
        cli, "run", "--scheme", "cbr:rate-kbps=3000", "--link", "const:2mbps", "--delay-ms", "35",
        "--queue", "droptail:packets=40", "--loss", "0.01", "--duration-s", "12",
        "--warmup-s", "2", "--seed", "7", "--json",
    )
    assert r.as_dict() == j
    assert r.packets_lost > 0 and r.loss_rate > 0.3  # 3 Mbit/s into 2: the queue drops


def test_reverse_trace_and_flows(cli) -> None:
    up = "traces/cellular/Verizon-LTE-short.up"
    r = wisp.run(scheme="gcc-remb", link=f"trace:{VERIZON}", reverse=up, flows=2, duration_s=30)
    j = cli_json(
        cli, "run", "--scheme", "gcc-remb", "--link", f"trace:{VERIZON}", "--reverse-trace", up,
        "--flows", "2", "--duration-s", "30", "--json",
    )
    assert r.as_dict() == j
    assert len(r.flows) == 2 and r.reverse == "Verizon-LTE-short.up"


def test_a_wifi_link_runs_as_on_the_command_line(cli) -> None:
    link = "wifi:std=11g,rate=54mbps,stations=4,load=tcp"
    r = wisp.run(scheme="sprout", link=link, duration_s=10)
    j = cli_json(cli, "run", "--scheme", "sprout", "--link", link, "--duration-s", "10", "--json")
    assert r.as_dict() == j
    assert r.throughput_kbps > 0
    try:
        wisp.run(scheme="sprout", link=link, queue="droptail:packets=10")
    except ValueError as e:
        assert "queue" in str(e)
    else:
        raise AssertionError("a queue on a wifi link was accepted")


def test_timeseries_and_packets_equal_the_cli_files(cli, tmp_path) -> None:
    r = wisp.run(scheme="sprout", link=f"trace:{VERIZON}", duration_s=20)
    code, _, err = cli(
        "run", "--scheme", "sprout", "--link", f"trace:{VERIZON}", "--duration-s", "20",
        "--out", str(tmp_path),
    )
    assert code == 0, err

    ts = r.timeseries
    with open(tmp_path / "timeseries.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(ts.columns) == list(rows[0].keys())
    assert len(ts) == len(rows) == 200
    for col in ts.columns:
        assert ts[col].dtype == np.float64
        want = [float(row[col]) if row[col] else math.nan for row in rows]
        got = [float(f"{x:.3f}") if not math.isnan(x) else math.nan for x in ts[col]]
        assert np.array_equal(np.array(got), np.array(want), equal_nan=True), col

    pk = r.packets
    csv_pk = pd.read_csv(tmp_path / "packets.csv", keep_default_na=False, na_values=[""])
    assert len(pk) == len(csv_pk) == r.packets_sent
    assert list(pk.columns) == list(csv_pk.columns)
    for col in ["flow", "seq", "size"]:
        assert np.array_equal(pk[col].to_numpy(), csv_pk[col].to_numpy()), col
    for col in ["sent_ms", "enqueued_ms", "delivered_ms", "dropped_ms"]:
        assert np.allclose(pk[col], csv_pk[col], rtol=0, atol=1e-6, equal_nan=True), col
    assert list(pk["drop_reason"].astype(str)) == [
        "" if isinstance(x, float) else x for x in csv_pk["drop_reason"]
    ]
    assert int(pk["delivered_ms"].notna().sum()) == r.packets_delivered


def test_report_page(tmp_path) -> None:
    r = wisp.run(scheme="cbr", link="const:2mbps", duration_s=5)
    r.report(tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "cbr" in html


def test_a_run_releases_the_gil() -> None:
    """Python code keeps running on another thread while a simulation runs."""
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    before = ticks
    start = time.perf_counter()
    wisp.run(scheme="sprout", link=f"trace:{VERIZON}")
    elapsed = time.perf_counter() - start
    during = ticks - before
    done.set()
    t.join()
    # With the GIL held for the whole run the counter would stand still.
    assert during >= max(5, elapsed / 0.001 / 20), (during, elapsed)
