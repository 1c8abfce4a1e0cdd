"""Input that used to abort the interpreter (an allocation of gigabytes), raise a bare
OverflowError, or give nonsense figures: each is now an exception naming the argument. What
could abort runs in a `capped` child process (conftest.py)."""

from __future__ import annotations

import re

import pytest

import wisp


def test_a_tiny_rate_bin_is_a_value_error_not_an_abort(capped) -> None:
    out = capped(
        """
        t = wisp.Trace.load("traces/cellular/Verizon-LTE-short.down")
        try:
            t.rate(1e-5)       # 14 billion bins over the 140-s trace
        except ValueError as e:
            print("ValueError:", e)
        """
    )
    assert "ValueError: bin_ms" in out and "bins" in out
    # The largest number of bins allowed still works.
    assert len(wisp.Trace.load("traces/cellular/Verizon-LTE-short.down").rate(1)) == 140_000


def test_the_stats_of_a_trace_centuries_long_are_a_value_error(capped, tmp_path) -> None:
    path = tmp_path / "long.down"
    path.write_text("1\n18446744073709\n")  # two lines, 584 years apart
    out = capped(
        f"""
        t = wisp.Trace.load({str(path)!r})
        try:
            t.stats()
        except ValueError as e:
            print("ValueError:", e)
        """
    )
    assert "ValueError: long.down: the trace's period is" in out, out
    assert wisp.Trace.load("traces/cellular/Verizon-LTE-short.down").stats()["duration_s"] == 140.0


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        (dict(seed=-1), ValueError, "seed"),
        (dict(seed=2**64), ValueError, "seed"),
        (dict(seed=1.5), TypeError, "seed"),
        (dict(seed=True), TypeError, "seed"),
        (dict(flows=-1), ValueError, "flows"),
        (dict(flows=70_000), ValueError, "flows"),
        (dict(duration_s=1e-12), ValueError, "duration_s"),
    ],
)
def test_out_of_range_numbers_name_the_argument(kwargs, error, names) -> None:
    with pytest.raises(error, match=names):
        wisp.run(scheme="cbr", link="const:1mbps", **{"duration_s": 1, **kwargs})


def test_times_beyond_the_clock_name_the_argument(capped) -> None:
    """They used to be clamped to the clock's end (about 584 years): `delay_ms=1e30` delivered
    in 12 ms, and `duration_s=1e30` ran until memory ran out."""
    out = capped(
        """
        for k in ("delay_ms", "duration_s", "warmup_s"):
            try:
                wisp.run(scheme="cbr", link="const:1mbps", **{"duration_s": 1, k: 1e30})
            except ValueError as e:
                print("ValueError:", e)
        """
    )
    assert "ValueError: delay_ms: 1e30 is too large (at most 60000 ms)" in out, out
    for k in ("duration_s", "warmup_s"):
        assert f"ValueError: {k}: 1e30 is too large (at most 86400 s)" in out, out


def _cli_bound(cli, option: str, value: str) -> str:
    """The bound the command line states for `option` (its message: `must be at most N UNIT`)."""
    code, _, err = cli("run", "--scheme", "cbr", "--link", "const:1mbps", option, value)
    assert code == 2, err
    m = re.search(r"must be at most (\S+ \S+)", err)
    assert m, err
    return m.group(1)


def test_times_have_the_simulators_bounds(capped, cli) -> None:
    """The package bounded times at 1.8e9 s, where the command line and scenario files bound a
    run at a day and a delay at 60 s (wisp-sim's MAX_DURATION and MAX_DELAY): `duration_s=1e9`
    ran until memory ran out. Now the same bounds, read from wisp-sim, with messages naming the
    argument and the bound in its unit."""
    assert _cli_bound(cli, "--duration-s", "1e9") == "86400 s"
    assert _cli_bound(cli, "--delay-ms", "1e9") == "60000 ms"
    assert (wisp.MAX_DURATION_S, wisp.MAX_DELAY_MS) == (86400.0, 60000.0)
    out = capped(
        """
        for k, v in (("duration_s", 1e9), ("duration_s", 86400.5), ("warmup_s", 86401),
                     ("delay_ms", 60000.5), ("delay_ms", 1.8e12)):
            try:
                wisp.run(scheme="cbr", link="const:1mbps", **{"duration_s": 1, k: v})
                print("ran", k, v)
            except ValueError as e:
                print("ValueError:", e)
        """
    )
    assert out.splitlines() == [
        "ValueError: duration_s: 1e9 is too large (at most 86400 s)",
        "ValueError: duration_s: 8.64005e4 is too large (at most 86400 s)",
        "ValueError: warmup_s: 8.6401e4 is too large (at most 86400 s)",
        "ValueError: delay_ms: 6.00005e4 is too large (at most 60000 ms)",
        "ValueError: delay_ms: 1.8e12 is too large (at most 60000 ms)",
    ], out
    # A grid and the Gymnasium environment's options go through the same checks.
    with pytest.raises(ValueError, match=r"duration_s: 1e9 is too large \(at most 86400 s\)"):
        wisp.run_grid({"schemes": "cbr", "links": "const:1mbps", "duration_s": 1e9})
    with pytest.raises(ValueError, match=r"delay_ms: 1e5 is too large \(at most 60000 ms\)"):
        wisp.bench("cbr", "traces/cellular/Verizon-LTE-short.down", delay_ms=1e5)


def test_wrong_types_and_jobs() -> None:
    with pytest.raises(TypeError, match="scheme"):
        wisp.run(scheme=5, link="const:1mbps")
    for jobs in (0, -1):
        with pytest.raises(ValueError, match="jobs"):
            wisp.bench("cbr", "traces/cellular/Verizon-LTE-short.down", duration_s=1, jobs=jobs)
        with pytest.raises(ValueError, match="jobs"):
            wisp.reproduce("sprout", jobs=jobs)
    with pytest.raises(ValueError, match="seed"):
        wisp.reproduce("sprout", seed=-1)


def test_the_largest_delay_delays() -> None:
    """The longest delay allowed (60 s, the bound itself) delivers nothing in a 1-s run (the
    clock used to saturate: `delay_ms=1e30` delivered in 12 ms)."""
    r = wisp.run(scheme="cbr", link="const:1mbps", duration_s=1, delay_ms=wisp.MAX_DELAY_MS)
    assert r.packets_delivered == 0 and r.packets_sent > 0
    assert r.delay_ms == 60000.0


# The Python API reads the same inputs as the command line, through the same checks.


def test_an_endless_trace_is_refused_at_its_size_limit(capped) -> None:
    out = capped(
        """
        for load in (lambda: wisp.Trace.load("/dev/zero"),
                     lambda: wisp.run(scheme="cbr", link="trace:/dev/zero", duration_s=1)):
            try:
                load()
            except ValueError as e:
                print("ValueError:", e)
        """
    )
    assert out.count("ValueError:") == 2 and out.count("limit of 64 MiB") == 2, out


@pytest.mark.parametrize(
    "link", ["const:1e12mbps", "steps:1mbps@0,20gbps@1s", "3g-up:rate=1e6mbps"]
)
def test_link_rates_above_the_limit_are_refused(link) -> None:
    with pytest.raises(ValueError, match="limit of 10gbps"):
        wisp.run(scheme="cbr", link=link, duration_s=1)


@pytest.mark.parametrize(
    "param, range_",
    [("heartbeat-ms=1e308", "60000"), ("reorder-ms=18446744073709551616", "10000")],
)
def test_parameters_out_of_range_name_the_range(param, range_) -> None:
    with pytest.raises(ValueError, match=range_):
        wisp.run(scheme=f"sprout:{param}", link="const:2mbps", duration_s=1)
