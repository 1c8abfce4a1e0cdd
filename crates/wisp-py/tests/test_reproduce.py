"""wisp.reproduce against `wisp reproduce PAPER --quick`: the same checks, the same figures."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import wisp


def _lines(df) -> list[str]:
    """The rows as the command line prints its checks."""
    out = []
    for r in df.itertuples():
        claim = r.claim if r.kind == "claim" else f"calibration (not a claim): {r.claim}"
        why = f" — not applicable: {r.not_applicable}" if r.status == "n/a" else ""
        out.append(f"{r.status:3}  {claim}: {r.measured} (expected {r.expected}){why}")
    return out


def _files(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by its path relative to it."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize("paper", wisp.PAPERS)
def test_reproduce_quick_gives_the_command_lines_checks(paper: str, cli, tmp_path) -> None:
    """Every paper of `wisp reproduce` (quick: wbest 13 s, alfalfa 10 s, kwikr 5 s on the
    loaded 2-core machine); the command line runs beside the Python call, which releases the
    GIL. With `out`, Python writes the command line's folder, byte for byte."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        cli_run = pool.submit(
            cli, "reproduce", paper, "--quick", "--out", str(tmp_path / "cli" / paper)
        )
        df = wisp.reproduce(paper, quick=True, out=tmp_path / "py" / paper)
        code, out, err = cli_run.result()
    assert len(df) > 5
    assert list(df.columns) == [
        "kind", "scope", "claim", "measured", "expected", "met", "status", "not_applicable"
    ]
    # A check that cannot fail on its data is neither met nor not met.
    assert not df[df.status == "n/a"].met.any()
    assert (df.status == "ok").equals(df.met)
    assert code == 0, err
    printed = [line for line in out.splitlines() if line.startswith(("ok ", "NO ", "n/a "))]
    assert _lines(df) == printed
    written, expected = _files(tmp_path / "py" / paper), _files(tmp_path / "cli" / paper)
    # The command line's folder has its summary, its page and at least one figure or table.
    assert {"report.html"} <= set(expected), sorted(expected)
    assert any(n.endswith((".svg", ".csv")) for n in expected), sorted(expected)
    assert sorted(written) == sorted(expected)
    differ = [n for n in expected if written[n] != expected[n]]
    assert not differ, f"{paper}: Python wrote other bytes in {differ}"


def test_reproduce_refuses_a_bad_out_before_running(tmp_path) -> None:
    """`out` is checked as `--out` is, before anything runs: here full (not quick) runs of
    minutes, refused at once, and nothing is written."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    for paper in ("kwikr", "sprout"):
        t = time.monotonic()
        with pytest.raises(ValueError, match="out .*a-file: is a file, not a folder"):
            wisp.reproduce(paper, out=a_file)
        with pytest.raises(ValueError, match="a-file is a file, not a folder"):
            wisp.reproduce(paper, out=a_file / "below")
        assert time.monotonic() - t < 2.0, "a run started before the check"
    assert a_file.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder: needs a user")
def test_reproduce_refuses_an_out_it_cannot_write(tmp_path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        t = time.monotonic()
        with pytest.raises(ValueError, match="cannot write into .*locked"):
            wisp.reproduce("kwikr", out=locked / "run")
        assert time.monotonic() - t < 2.0, "a run started before the check"
    finally:
        locked.chmod(0o700)
    assert list(locked.iterdir()) == []


def test_reproduce_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown paper `nope`"):
        wisp.reproduce("nope")
    with pytest.raises(ValueError, match="does not apply to mehrotra"):
        wisp.reproduce("mehrotra", trace="traces/wifi/google-wifi-3mbps.rx")
    with pytest.raises(ValueError, match="missing"):
        wisp.reproduce("gcc-wifi", trace="traces/wifi/missing.rx", quick=True)
    # The papers added after the first three: the command line's messages.
    with pytest.raises(ValueError, match=f"known: {', '.join(wisp.PAPERS)}"):
        wisp.reproduce("nope")
    assert {"sprout", "gcc-wifi", "mehrotra", "wbest", "kwikr", "alfalfa"} <= set(wisp.PAPERS)
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
