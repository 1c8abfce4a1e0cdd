"""wisp.reproduce against `wisp reproduce PAPER --quick`: the same checks, the same figures."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

import wisp


def _lines(df) -> list[str]:
    """The rows as the command line prints its checks."""
    out = []
    for r in df.itertuples():
        claim = r.claim if r.kind == "claim" else f"calibration (not a claim): {r.claim}"
        out.append(f"{'ok' if r.met else 'NO':3}  {claim}: {r.measured} (expected {r.expected})")
    return out


@pytest.mark.parametrize("paper", ["gcc-wifi", "mehrotra", "sprout", "wbest", "kwikr", "alfalfa"])
def test_reproduce_quick_gives_the_command_lines_checks(paper: str, cli, tmp_path) -> None:
    """Every paper of `wisp reproduce` (quick: wbest 13 s, alfalfa 10 s, kwikr 5 s on the
    loaded 2-core machine); the command line runs beside the Python call, which releases the
    GIL."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        cli_run = pool.submit(cli, "reproduce", paper, "--quick", "--out", str(tmp_path / paper))
        df = wisp.reproduce(paper, quick=True)
        code, out, err = cli_run.result()
    assert len(df) > 5
    assert list(df.columns) == ["kind", "scope", "claim", "measured", "expected", "met"]
    assert code == 0, err
    printed = [line for line in out.splitlines() if line.startswith(("ok ", "NO "))]
    assert _lines(df) == printed


def test_reproduce_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown paper `nope`"):
        wisp.reproduce("nope")
    with pytest.raises(ValueError, match="does not apply to mehrotra"):
        wisp.reproduce("mehrotra", trace="traces/wifi/google-wifi-3mbps.rx")
    with pytest.raises(ValueError, match="missing"):
        wisp.reproduce("gcc-wifi", trace="traces/wifi/missing.rx", quick=True)
    # The papers added after the first three: the command line's messages.
    with pytest.raises(ValueError, match="known: sprout, gcc-wifi, mehrotra, wbest, kwikr, alfalfa"):
        wisp.reproduce("nope")
    for paper, arg, takes in [
        ("wbest", "trace", "it runs on the simulated 802.11g testbed"),
        ("wbest", "traces", "it runs on the simulated 802.11g testbed"),
        ("kwikr", "trace", "it runs its scenarios on the simulated 802.11 medium"),
        ("kwikr", "traces", "it runs its scenarios on the simulated 802.11 medium"),
        ("alfalfa", "trace", "it takes traces=DIR"),
    ]:
        with pytest.raises(ValueError, match=f"{arg} does not apply to {paper} \\({takes}\\)"):
            wisp.reproduce(paper, quick=True, **{arg: "traces/cellular"})
    with pytest.raises(ValueError, match="missing"):
        wisp.reproduce("alfalfa", traces="traces/missing", quick=True)
    for paper in ("wbest", "kwikr", "alfalfa"):
        with pytest.raises(ValueError, match="seed"):
            wisp.reproduce(paper, seed=-1)
        with pytest.raises(ValueError, match="jobs"):
            wisp.reproduce(paper, jobs=0)
