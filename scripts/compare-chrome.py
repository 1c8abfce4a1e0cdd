#!/usr/bin/env python3
"""wisp's `gcc` against Chrome through `wisp link`: the by-hand comparison of issue "GCC as
browsers run it today", acceptance item "Against Chrome through `wisp link`".

For each case, N runs each (medians) of:

- chrome: `wisp browser-call` (two headless Chromiums, the receiver inside `wisp link`);
- real:   `wisp recv` inside `wisp link --log DIR`, `wisp send --scheme gcc` on the host;
- sim:    `wisp run --scheme gcc` over the same link spec.

All with 20 ms each way and the link's default (infinite) queue. Prints a Markdown table of the
figures and of each acceptance comparison against Chrome (or one JSON object with --json).

    sudo python3 scripts/compare-chrome.py --quick          # const links, 20 s, one run
    sudo python3 scripts/compare-chrome.py                  # every case, 3 runs (about 50 min)
    sudo python3 scripts/compare-chrome.py --cases const1,variable --runs 5 --keep /tmp/cmp
    python3 scripts/compare-chrome.py --from old.json --rerun sim   # Chrome's and real runs kept

The estimate: Chrome's `availableOutgoingBitrate` every 200 ms (browser-call's stats.csv); for
`wisp send` and `wisp run` the scheme's target every 100 ms from their controller.csv (`--out`).
`--scheme` runs wisp with another spec, e.g. `gcc:max-kbps=1700` for an encoder that caps where
Chrome's does at 640x480 (its encoder target's median on the 2 Mbit/s link). The p95
queueing delay comes from each one's link log: browser-call's `downlink` (over the call),
`wisp analyze --json` of the real flow's downlink.log, the simulator's queue_delay_p95_ms.
Per-phase medians of the variable case leave out the first 5 s of each phase (the calls start
0.3-3 s after the link's clock). wisp's run i (real and simulated) has seed i (1, 2, 3: the
encoder model's frame sizes differ, so the runs are independent; with one seed the simulator's
would be one run three times). `--from` takes the runs of an earlier `--json` output and `--rerun` runs only the named
ones again (e.g. the simulator after a change, against the same Chrome calls). Needs root and
Chromium (as `wisp browser-call`) for what it runs of those two.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CELL = ROOT / "traces" / "cellular"
DELAY_MS = "20"
PHASE_GUARD_S = 5.0
SLACK_S = 120  # every child gets its duration plus this before it is killed

CASES = {
    "const1": {"link": "const:1mbps", "secs": 60, "const_kbps": 1000.0},
    "const2.5": {"link": "const:2.5mbps", "secs": 60, "const_kbps": 2500.0},
    "variable": {
        "link": "steps:1mbps@0,2.5mbps@40s,0.6mbps@60s,1mbps@80s",
        "secs": 100,
        "phases": [(0.0, 40.0), (40.0, 60.0), (60.0, 80.0), (80.0, 100.0)],
    },
    "verizon": {"trace": "Verizon-LTE-short", "secs": 60},
    "tmobile": {"trace": "TMobile-LTE-short", "secs": 60},
    "wifi4": {"link": "wifi:std=11g,rate=54mbps,stations=4,load=saturated", "secs": 60},
}
QUICK = ["const1", "const2.5"]


def links(case: dict) -> tuple[str, str | None]:
    """The downlink spec and the uplink's (None: the tool's default)."""
    if "trace" in case:
        base = CELL / case["trace"]
        return f"{base}.down", f"{base}.up"
    return case["link"], None


class Failed(Exception):
    """One run failed: it is reported and left out of the medians."""


def run(cmd: list[str], secs: float) -> subprocess.CompletedProcess:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=secs + SLACK_S, cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        raise Failed(f"wisp {cmd[1]} took over {e.timeout:.0f} s") from e
    if p.returncode != 0:
        raise Failed(f"wisp {cmd[1]} exited {p.returncode}: {p.stderr.strip()[-600:]}")
    return p


# --- the three ways of running a case: each returns one run's raw figures -----------------


def chrome(wisp: str, _scheme: str, case: dict, secs: int, out: Path, _seed: int) -> dict:
    down, up = links(case)
    cmd = [wisp, "browser-call", "--link", down, "--delay-ms", DELAY_MS]
    cmd += ["--uplink", up] if up else []
    cmd += ["--duration-s", str(secs), "--json", "--out", str(out)]
    s = json.loads(run(cmd, secs + 30).stdout)
    with open(out / "stats.csv", newline="") as f:
        series = [
            (float(r["t_s"]), float(r["estimate_bps"]) / 1e3)
            for r in csv.DictReader(f)
            if r["role"] == "sender" and r["estimate_bps"]
        ]
    b = s["browser"]
    return {
        "series": series,
        "throughput_kbps": s["downlink"]["throughput_kbps"],
        "p95_ms": s["downlink"]["delay_p95_ms"],
        "limitation": b.get("quality_limitation"),
        "limitation_shares": b.get("quality_limitation_shares"),
    }


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def namespace_address(link: subprocess.Popen, lines: list[str]) -> str | None:
    """Reads the link's stderr until it names the namespace's address; keeps draining after."""
    found = threading.Event()
    addr: list[str] = []

    def drain() -> None:
        for line in link.stderr:
            lines.append(line)
            if not addr and "namespace " in line:
                addr.append(line.split("namespace ", 1)[1].split()[0])
                found.set()
        found.set()

    threading.Thread(target=drain, daemon=True).start()
    found.wait(30)
    return addr[0] if addr else None


def target_series(controller_csv: Path) -> list[tuple[float, float]]:
    """(s, target kbit/s) of flow 0 in a controller.csv (`wisp run --out`, `wisp send --out`)."""
    with open(controller_csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["flow"] == "0" and r["target_kbps"]]
    return [(float(r["t_s"]), float(r["target_kbps"])) for r in rows]


def real(wisp: str, scheme: str, case: dict, secs: int, out: Path, seed: int) -> dict:
    down, up = links(case)
    port = free_port()
    cmd = [wisp, "link", "--downlink", down, "--delay-ms", DELAY_MS, "--log", str(out)]
    cmd += ["--uplink", up] if up else ([] if down.startswith("wifi") else ["--uplink", down])
    cmd += ["--", wisp, "recv", "--listen", f"0.0.0.0:{port}", "--json"]
    pipe = subprocess.PIPE
    link = subprocess.Popen(cmd, stdout=pipe, stderr=pipe, text=True, cwd=ROOT)
    lines: list[str] = []
    try:
        ns = namespace_address(link, lines)
        if ns is None:
            raise Failed("wisp link named no namespace: " + "".join(lines)[-600:])
        send = [wisp, "send", "--seed", str(seed), "--scheme", scheme, "--to", f"{ns}:{port}"]
        run(send + ["--duration-s", str(secs), "--out", str(out / "sender")], secs)
        try:  # stderr is the drain thread's; recv's JSON is far below a pipe's buffer
            link.wait(timeout=SLACK_S)
            recv_out = link.stdout.read()
        except subprocess.TimeoutExpired as e:
            raise Failed(f"wisp recv did not end {SLACK_S} s after the sender") from e
    finally:
        if link.poll() is None:
            link.kill()
            link.wait(10)
    if link.returncode != 0:
        raise Failed(f"wisp link exited {link.returncode}: " + "".join(lines)[-600:])
    flow = json.loads(recv_out)["flows"][0]
    logs = json.loads(run([wisp, "analyze", "--json", str(out / "downlink.log")], 0).stdout)
    return {
        "series": target_series(out / "sender" / "controller.csv"),
        "throughput_kbps": flow["throughput_kbps"],
        "p95_ms": logs["logs"][0]["delay_p95_ms"],
    }


def sim(wisp: str, scheme: str, case: dict, secs: int, out: Path, seed: int) -> dict:
    down, up = links(case)
    cmd = [wisp, "run", "--seed", str(seed), "--scheme", scheme]
    cmd += ["--link", down if up is None else f"trace:{down}"]
    cmd += ["--reverse-trace", up] if up else []
    cmd += ["--delay-ms", DELAY_MS, "--duration-s", str(secs), "--json", "--out", str(out)]
    flow = json.loads(run(cmd, secs).stdout)["flows"][0]
    return {
        "series": target_series(out / "controller.csv"),
        "throughput_kbps": flow["throughput_kbps"],
        "p95_ms": flow["queue_delay_p95_ms"],
    }


RUNNERS = {"chrome": chrome, "real": real, "sim": sim}


# --- figures of a run, medians of runs, comparisons ----------------------------------------


def median_in(series: list[tuple[float, float]], start: float, end: float) -> float | None:
    v = [k for t, k in series if start <= t < end]
    return statistics.median(v) if v else None


def figures(raw: dict, case: dict, secs: int) -> dict:
    s = raw["series"]
    f = {
        "estimate_median_10s_kbps": median_in(s, 10.0, secs + 1.0),
        "throughput_kbps": raw["throughput_kbps"],
        "p95_ms": raw["p95_ms"],
    }
    if "const_kbps" in case:
        hit = [t for t, k in s if k >= 0.8 * case["const_kbps"]]
        f["time_to_80pct_s"] = hit[0] if hit else math.inf  # never, within the run
    for i, (a, b) in enumerate(case.get("phases", [])):
        if a < secs:
            f[f"phase{i + 1}_kbps"] = median_in(s, a + PHASE_GUARD_S, min(b, secs))
    return f


def medians(runs: list[dict]) -> dict:
    keys = runs[0].keys() if runs else []
    out = {}
    for k in keys:
        v = [r[k] for r in runs if r.get(k) is not None]
        out[k] = statistics.median(v) if v else None
    return out


def within(x, c, rel: float, abs_: float = 0.0) -> bool | None:
    if x is None or c is None:
        return None
    return abs(x - c) <= max(rel * abs(c), abs_)


def checks(case: dict, wisp: dict, ch: dict) -> dict:
    """The acceptance comparisons of one of wisp's medians against Chrome's."""
    c = {}
    if not wisp or not ch:
        return c
    if "const_kbps" in case:
        t, tc = wisp["time_to_80pct_s"], ch["time_to_80pct_s"]
        c["time_to_80pct_s"] = t < 1.0 or within(t, tc, 0.0, 0.5)
        c["estimate_median_10s_kbps"] = within(
            wisp["estimate_median_10s_kbps"], ch["estimate_median_10s_kbps"], 0.15
        )
    elif "phases" in case:
        for k in (k for k in wisp if k.startswith("phase")):
            c[k] = within(wisp[k], ch.get(k), 0.20)
        c["p95_ms"] = within(wisp["p95_ms"], ch["p95_ms"], 0.30, 20.0)
    else:
        c["throughput_kbps"] = within(wisp["throughput_kbps"], ch["throughput_kbps"], 0.25)
        c["p95_ms"] = within(wisp["p95_ms"], ch["p95_ms"], 0.30, 30.0)
    return c


def run_many(wisp: str, scheme: str, name: str, who: str, secs: int, runs: int, keep: Path) -> dict:
    """`runs` runs of one of the three on case `name`: each run's figures, the failures, medians."""
    case = CASES[name]
    per_run, failed = [], []
    for i in range(runs):
        out = keep / name / f"{who}-{i + 1}"
        out.mkdir(parents=True, exist_ok=True)
        print(f"compare-chrome: {name} {who} run {i + 1}/{runs} ({secs} s)", file=sys.stderr)
        try:
            raw = RUNNERS[who](wisp, scheme, case, secs, out, i + 1)
        except (Failed, ValueError, KeyError, OSError) as e:
            print(f"compare-chrome: {name} {who} run {i + 1} failed: {e}", file=sys.stderr)
            failed.append(f"run {i + 1}: " + " ".join(str(e).split()).replace("|", "/"))
            continue
        extra = {k: v for k, v in raw.items() if k.startswith("limitation")}
        per_run.append({**figures(raw, case, secs), **extra})
    numeric = [{k: v for k, v in r.items() if not k.startswith("limitation")} for r in per_run]
    return {"runs": per_run, "failed": failed, "median": medians(numeric)}


def run_case(
    wisp: str, scheme: str, name: str, secs: int, runs: int, keep: Path, old: dict | None
) -> dict:
    """Every runner on case `name`; those `old` holds (an earlier result of the case) are its."""
    result = {"case": name, "link": links(CASES[name])[0], "secs": secs}
    for who in RUNNERS:
        if old is not None and who in old:
            result[who] = old[who]
            numeric = [
                {k: v for k, v in r.items() if not k.startswith("limitation")}
                for r in old[who]["runs"]
            ]
            result[who]["median"] = medians(numeric)
        else:
            result[who] = run_many(wisp, scheme, name, who, secs, runs, keep)
    ch = result["chrome"]["median"]
    result["checks"] = {w: checks(CASES[name], result[w]["median"], ch) for w in ("real", "sim")}
    return result


# --- output ---------------------------------------------------------------------------------


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "pass" if v else "FAIL"
    if math.isinf(v):
        return "never"
    return f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def finite(v):
    """`v` with every infinite figure (never reached) as null, for strict JSON."""
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return None if isinstance(v, float) and math.isinf(v) else v


def limitation(run: dict) -> str:
    """Chrome's last quality-limitation reason and the share of snapshots per reason."""
    shares = ", ".join(f"{k} {v:.0%}" for k, v in run.get("limitation_shares") or [])
    return f"{run.get('limitation')} ({shares})"


def table(results: list[dict], runs: int, scheme: str) -> str:
    lines = [
        f"Medians of {runs} run(s) each; 20 ms each way; wisp runs `{scheme}`; the checks are"
        " against Chrome.",
        "",
        "| case | figure | Chrome | wisp real | check | wisp sim | check |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ch, re, si = (r[w]["median"] for w in ("chrome", "real", "sim"))
        for k in dict.fromkeys([*ch, *re, *si]):
            cr, cs = r["checks"]["real"].get(k), r["checks"]["sim"].get(k)
            row = [r["case"], k, fmt(ch.get(k)), fmt(re.get(k)), fmt(cr), fmt(si.get(k)), fmt(cs)]
            lines.append("| " + " | ".join(row) + " |")
        for w in ("chrome", "real", "sim"):
            lines += [f"| {r['case']} | {w} failed | {e} | | | | |" for e in r[w]["failed"]]
        reasons = "; ".join(limitation(x) for x in r["chrome"]["runs"])
        lines.append(f"| {r['case']} | Chrome's quality limitation (per run) | {reasons} | | | | |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wisp", default=str(ROOT / "target" / "release" / "wisp"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scheme", default="gcc", help="wisp's scheme spec (default: gcc)")
    ap.add_argument("--cases", help="comma-separated: " + ",".join(CASES))
    ap.add_argument("--secs", type=int, help="override every case's duration")
    ap.add_argument("--quick", action="store_true", help="const cases, 20 s, one run")
    ap.add_argument("--keep", type=Path, help="keep every run's outputs in this folder")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--from", dest="old", type=Path, help="an earlier --json output to reuse")
    ap.add_argument("--rerun", default="", help="with --from: who to run again (chrome,real,sim)")
    a = ap.parse_args()
    old = {}
    if a.old:
        try:
            prev = json.loads(a.old.read_text())
            old = {r["case"]: r for r in prev["results"]}
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"compare-chrome: {a.old}: not an earlier --json output ({e})")
        a.scheme = prev.get("scheme", a.scheme) if a.scheme == "gcc" else a.scheme
    rerun = [w for w in a.rerun.split(",") if w]
    names = a.cases.split(",") if a.cases else (list(old) or (QUICK if a.quick else list(CASES)))
    bad = [n for n in names if n not in CASES] + [w for w in rerun if w not in RUNNERS]
    if bad or not 1 <= a.runs <= 20 or not Path(a.wisp).is_file():
        sys.exit(f"compare-chrome: unknown case(s) or runner(s) {bad}, --runs 1..20, or no binary {a.wisp}")
    runs = prev.get("runs", a.runs) if old else (1 if a.quick else a.runs)
    with tempfile.TemporaryDirectory(prefix="wisp-compare-chrome-") as tmp:
        keep = (a.keep or Path(tmp)).resolve()
        results = []
        for n in names:
            prev_case = None
            if n in old:
                prev_case = {w: old[n][w] for w in RUNNERS if w in old[n] and w not in rerun}
            secs = a.secs or (old[n]["secs"] if n in old else None)
            secs = secs or (20 if a.quick else CASES[n]["secs"])
            results.append(run_case(a.wisp, a.scheme, n, secs, runs, keep, prev_case))
    if a.json:
        print(json.dumps(finite({"runs": runs, "scheme": a.scheme, "results": results}), indent=1))
    else:
        print(table(results, runs, a.scheme))
    return 0


if __name__ == "__main__":
    sys.exit(main())
