"""`wisp.bench` over the README's main job equals `wisp bench`'s results.json."""

from __future__ import annotations

import json
import math

import wisp

# The main job of the README.
MAIN_SCHEMES = (
    "ideal,sprout,sprout-ewma,gcc,gcc-grouping:prefilter=libwebrtc,cubic,newreno,vegas,compound,"
    "ledbat,cbr"
)


def test_main_job_matrix_equals_wisp_bench(cli, tmp_path) -> None:
    code, _, err = cli(
        "bench", "--traces", "traces/cellular", "--schemes", MAIN_SCHEMES, "--out", str(tmp_path)
    )
    assert code == 0, err
    want = json.loads((tmp_path / "results.json").read_text())
    df = wisp.bench(MAIN_SCHEMES, "traces/cellular")
    assert len(df) == len(want) == 110
    for i, w in enumerate(want):
        row = df.iloc[i]
        for k in wisp.REPORT_FIELDS:
            assert row[k] == w[k], (i, k)
        for k in wisp.METRICS:
            v = w["flows"][0][k]
            if v is None:
                assert math.isnan(row[k]), (i, k)
            else:
                assert row[k] == v, (i, w["scheme"], w["trace"], k, row[k], v)
    sprout = df[(df.scheme == "sprout") & (df.trace == "Verizon-LTE-short.down")]
    print("bench sprout on Verizon-LTE-short.down:", float(sprout.throughput_kbps.iloc[0]), "kbit/s")


def test_lists_and_options(cli, tmp_path) -> None:
    traces = ["traces/cellular/TMobile-LTE-short.down", "traces/cellular/Verizon-EVDO-driving.up"]
    args = ["--delay-ms", "30", "--duration-s", "20", "--seed", "3", "--reverse", "delay"]
    code, _, err = cli(
        "bench", "--schemes", "cbr:rate-kbps=2000,sprout", "--traces", ",".join(traces),
        "--out", str(tmp_path), *args,
    )
    assert code == 0, err
    want = json.loads((tmp_path / "results.json").read_text())
    df = wisp.bench(
        ["cbr:rate-kbps=2000", "sprout"], traces, delay_ms=30, duration_s=20, seed=3,
        reverse="delay", jobs=1,
    )
    assert list(df.scheme) == [w["scheme"] for w in want]
    assert list(df.throughput_kbps) == [w["flows"][0]["throughput_kbps"] for w in want]
    assert list(df.packets_sent) == [w["flows"][0]["packets_sent"] for w in want]
    assert set(df.reverse) == {"delay-only"}


def test_ctrl_c_stops_a_bench_within_a_run() -> None:
    """Ctrl-C during `wisp.bench` raises KeyboardInterrupt once the runs under way end (each well
    under a second here), not after the whole matrix (70 runs, about 15 s on one thread): the
    bench used to wait with the GIL released and never look at signals."""
    import signal
    import subprocess
    import sys
    import time

    code = (
        "import signal, wisp\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('start', flush=True)\n"
        "try:\n"
        "    wisp.bench('sprout,gcc,cubic,vegas,ledbat,newreno,compound', 'traces/cellular', jobs=1)\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "start"
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, _ = p.communicate(timeout=120)
        after = time.monotonic() - sent
    finally:
        p.kill()
    assert out.strip() == "interrupted", out
    assert after < 4.0, f"the bench went on for {after:.1f} s after Ctrl-C"
