"""Bad input is a ValueError carrying the command line's message, never a crash."""

from __future__ import annotations

import pytest

import wisp


def _cli_error(cli, *args: str) -> str:
    code, _, err = cli(*args)
    assert code == 2, (code, err)
    return err


@pytest.mark.parametrize(
    ("kwargs", "cli_args", "names"),
    [
        (
            dict(scheme="nope", link="const:1mbps"),
            ["--scheme", "nope", "--link", "const:1mbps"],
            "unknown scheme `nope`",
        ),
        (
            dict(scheme="cbr:speed=3", link="const:1mbps"),
            ["--scheme", "cbr:speed=3", "--link", "const:1mbps"],
            "speed",
        ),
        (
            dict(scheme="cbr", link="bogus:1"),
            ["--scheme", "cbr", "--link", "bogus:1"],
            "unknown link kind `bogus`",
        ),
        (
            dict(scheme="cbr", link="trace:traces/cellular/missing.down"),
            ["--scheme", "cbr", "--link", "trace:traces/cellular/missing.down"],
            "missing.down",
        ),
        (
            dict(scheme="cbr", link="const:1mbps", warmup_s=100),
            ["--scheme", "cbr", "--link", "const:1mbps", "--warmup-s", "100"],
            "--warmup-s",
        ),
    ],
)
def test_run_errors_name_the_problem_as_the_cli_does(cli, kwargs, cli_args, names) -> None:
    with pytest.raises(ValueError) as e:
        wisp.run(**kwargs)
    message = str(e.value)
    assert names in message
    # The command line prints the same message, whole (after the option's name, for clap's
    # parsers).
    assert message in _cli_error(cli, "run", *cli_args)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(queue="fifo"),
        dict(loss="2"),
        dict(delay_ms=-1),
        dict(duration_s=0),
        dict(timer_jitter_us=float("nan")),
        dict(reverse="traces/cellular/missing.up"),
        dict(flows=0),
    ],
)
def test_bad_options_raise_value_error(kwargs) -> None:
    with pytest.raises(ValueError):
        wisp.run(scheme="cbr", link="const:1mbps", **kwargs)


def test_bench_errors(cli) -> None:
    with pytest.raises(ValueError, match="unknown scheme `nope`"):
        wisp.bench(["sprout", "nope"], "traces/cellular")
    with pytest.raises(ValueError, match="no such file or folder"):
        wisp.bench("sprout", "traces/nowhere")
    with pytest.raises(ValueError, match="neither"):
        wisp.bench("sprout", "traces/cellular", reverse="both")


def test_trace_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="missing.down"):
        wisp.Trace.load("traces/cellular/missing.down")
    bad = tmp_path / "bad.down"
    bad.write_text("1\n2\nthree\n")
    with pytest.raises(ValueError, match="bad.down"):
        wisp.Trace.load(bad)
    with pytest.raises(ValueError, match="bin_ms"):
        wisp.Trace.load("traces/cellular/Verizon-LTE-short.down").rate(0)
