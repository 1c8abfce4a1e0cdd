"""Input that used to abort the interpreter (an allocation of gigabytes), raise a bare
OverflowError, or give nonsense figures: each is now an exception naming the argument. What
could abort runs in a `capped` child process (conftest.py)."""

from __future__ import annotations

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
    for k in ("delay_ms", "duration_s", "warmup_s"):
        assert f"ValueError: {k}: 1e30 is too large (at most 1.8e9 s)" in out, out


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


def test_a_large_delay_delays() -> None:
    """A delay of a year is allowed, and delivers nothing in a 1-s run (the clock used to
    saturate: `delay_ms=1e30` delivered in 12 ms)."""
    r = wisp.run(scheme="cbr", link="const:1mbps", duration_s=1, delay_ms=3.2e10)
    assert r.packets_delivered == 0 and r.packets_sent > 0
