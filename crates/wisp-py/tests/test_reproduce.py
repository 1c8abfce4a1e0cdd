"""wisp.reproduce against `wisp reproduce PAPER --quick`: the same checks, the same figures."""

from __future__ import annotations

import pytest

import wisp


def _lines(df) -> list[str]:
    """The rows as the command line prints its checks."""
    out = []
    for r in df.itertuples():
        claim = r.claim if r.kind == "claim" else f"calibration (not a claim): {r.claim}"
        out.append(f"{'ok' if r.met else 'NO':3}  {claim}: {r.measured} (expected {r.expected})")
    return out


@pytest.mark.parametrize("paper", ["gcc-wifi", "mehrotra", "sprout"])
def test_reproduce_quick_gives_the_command_lines_checks(paper: str, cli, tmp_path) -> None:
    df = wisp.reproduce(paper, quick=True)
    assert len(df) > 5
    assert list(df.columns) == ["kind", "scope", "claim", "measured", "expected", "met"]
    code, out, err = cli("reproduce", paper, "--quick", "--out", str(tmp_path / paper))
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
