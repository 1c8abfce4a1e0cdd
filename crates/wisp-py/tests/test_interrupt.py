"""Ctrl-C during one `wisp.run` of built-in schemes: the engine's cancel point (every few
thousand events) lets the package run Python's signal handlers, so the run stops with
KeyboardInterrupt at once. It used to run to its end (the run releases the GIL and never looked
at signals): here tens of seconds to minutes."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

#: Runs of built-in schemes much longer than the test waits, with a small packet log: a wired
#: link (Sprout on a slow constant link for 6 hours: its receiver's 20-ms ticks make the events;
#: 10 s and 350 MB run to the end by `wisp run`), and the 802.11 medium, whose contending TCP
#: stations make most of the events (a day: `wisp run` takes minutes).
LONG_RUNS = {
    "wired": 'scheme="sprout", link="const:100kbps", duration_s=21600',
    "wifi": 'scheme="cbr:rate-kbps=200", link="wifi:std=11g,rate=54mbps,stations=8,load=tcp", '
    "duration_s=86400",
    # A day of a slow constant link: the simulation takes well under a second, then its
    # metrics (86.4 M milliseconds of Sprout's end-to-end delay, twice) about two more, where
    # Ctrl-C used to wait for them (1.5 s).
    "metrics": 'scheme="cbr:rate-kbps=100", link="const:100kbps", duration_s=86400',
}


@pytest.mark.parametrize("kind", sorted(LONG_RUNS))
def test_ctrl_c_stops_a_single_run(kind: str) -> None:
    # The answer within 10 s (without the cancel point the run went on for 74 s and more).
    line, after, _, err = _interrupted_after(f"wisp.run({LONG_RUNS[kind]})")
    assert line == "interrupted", (line, err)
    assert after < 1.0, f"the run went on for {after:.2f} s after Ctrl-C"
    print(f"{kind}: KeyboardInterrupt {after * 1e3:.0f} ms after SIGINT")


def test_a_run_polled_by_the_cancel_point_gives_the_same_figures(cli) -> None:
    """The cancel point reads nothing of the simulation: a run that is not interrupted gives
    the command line's figures to the last bit (the CLI runs without a cancel point)."""
    import json

    import wisp

    args = dict(scheme="sprout", link="trace:traces/cellular/Verizon-LTE-short.down", duration_s=60)
    r = wisp.run(**args)
    code, out, err = cli(
        "run", "--scheme", "sprout", "--trace", "traces/cellular/Verizon-LTE-short.down",
        "--duration-s", "60", "--json",
    )
    assert code == 0, err
    assert r.as_dict() == json.loads(out)
    assert r.packets_sent > 10_000  # enough events for many polls (every 4096)


@pytest.mark.parametrize("paper", ["sprout", "gcc-wifi", "mehrotra", "wbest", "kwikr", "alfalfa"])
def test_ctrl_c_stops_a_full_reproduction(paper: str, tmp_path) -> None:
    """Ctrl-C 1 s into a full (not quick) reproduction, which runs for minutes, many runs in
    parallel: the main thread keeps checking for signals while the reproduction runs on a
    worker thread, and a signal's exception stops its runs at the engine's cancel point.
    Nothing is written into `out`."""
    out = tmp_path / "out"
    code = (
        "import signal, sys, time, wisp\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('start', flush=True)\n"
        "t = time.monotonic()\n"
        "try:\n"
        f"    wisp.reproduce({paper!r}, jobs=2, out=sys.argv[1])\n"
        "    print('finished', time.monotonic() - t, flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(out)], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "start"
        time.sleep(1.0)
        assert p.poll() is None, "the reproduction ended before Ctrl-C"
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
        ready, _, _ = select.select([p.stdout], [], [], 10.0)
        after = time.monotonic() - sent
        assert ready, f"no answer {after:.0f} s after Ctrl-C"
        line = p.stdout.readline().strip()
        # The process ends once the worker threads have stopped at their cancel point.
        rc = p.wait(timeout=10)
        ended = time.monotonic() - sent
    finally:
        p.kill()
        _, err = p.communicate()
    assert line == "interrupted", (line, err)
    assert rc == 3, err
    assert after < 1.0, f"{paper} went on for {after:.2f} s after Ctrl-C"
    assert not out.exists(), "an interrupted reproduction wrote its folder"
    print(f"{paper}: KeyboardInterrupt {after * 1e3:.0f} ms after SIGINT, exit {ended:.2f} s")


def _interrupted_after(call: str) -> tuple[str, float, float, str]:
    """Runs ``call`` in a fresh interpreter, sends SIGINT 1 s in; returns the line it printed
    (``interrupted`` for a KeyboardInterrupt), the seconds from SIGINT to that line and to the
    process's end, and its stderr."""
    code = (
        "import signal, sys, time, wisp\n"
        "from wisp.examples import aimd\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('start', flush=True)\n"
        "try:\n"
        f"    {call}\n"
        "    print('finished', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "start"
        time.sleep(1.0)
        assert p.poll() is None, "the call ended before Ctrl-C"
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
        ready, _, _ = select.select([p.stdout], [], [], 10.0)
        after = time.monotonic() - sent
        assert ready, f"no answer {after:.0f} s after Ctrl-C"
        line = p.stdout.readline().strip()
        p.wait(timeout=10)
        ended = time.monotonic() - sent
    finally:
        p.kill()
        _, err = p.communicate()
    return line, after, ended, err


def test_ctrl_c_stops_a_grid_and_its_runs_under_way() -> None:
    """A local grid of day-long runs on two worker threads: the worker threads never see the
    signal, so the grid's token stops their runs (it used to wait for them: 8.5 s, or more
    than 30 s for day-long runs)."""
    line, after, ended, err = _interrupted_after(
        "wisp.run_grid({'schemes': ['sprout'], 'links': ['const:100kbps'], 'seeds': [1, 2, 3, 4], "
        "'duration_s': 86400}, jobs=2)"
    )
    assert line == "interrupted", (line, err)
    assert after < 1.0, f"the grid went on for {after:.2f} s after Ctrl-C"
    assert ended < 2.0, f"the process took {ended:.2f} s to end after Ctrl-C"
    print(f"grid: KeyboardInterrupt {after * 1e3:.0f} ms after SIGINT, exit {ended:.2f} s")


def test_ctrl_c_stops_a_run_of_python_controllers() -> None:
    """A run with a Python controller keeps the GIL; the engine's cancel point runs Python's
    signal handlers at most every 50 ms of wall time (it used to check every 4096 hook calls:
    2.3-3.8 s)."""
    line, after, _, err = _interrupted_after(
        "wisp.run(scheme=aimd.controller(), link='const:100kbps', duration_s=86400)"
    )
    assert line == "interrupted", (line, err)
    assert after < 0.5, f"the run went on for {after:.2f} s after Ctrl-C"
    print(f"python controller: KeyboardInterrupt {after * 1e3:.0f} ms after SIGINT")
