"""The cost of a Python controller per callback: the example AIMD (wisp.examples.aimd) against
its Rust twin over the same scenario; (Python run time − Rust run time) / callbacks.

    python crates/wisp-py/examples/controller_cost.py [--link SPEC] [--duration-s N] [--repeat N]

Run it by hand (from the repository root); it asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import time

import wisp
from wisp.examples import aimd


def best(f, repeat: int) -> tuple[float, wisp.RunResult]:
    times, r = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        r = f()
        times.append(time.perf_counter() - t)
    return min(times), r


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--link", default="trace:traces/cellular/Verizon-LTE-short.down")
    p.add_argument("--duration-s", type=float, default=60.0)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    kw = dict(link=a.link, duration_s=a.duration_s)
    t_py, py = best(lambda: wisp.run(scheme=aimd.controller(), **kw), a.repeat)
    t_rs, rs = best(lambda: wisp.run(scheme=wisp.Controller.rust_example_aimd(), **kw), a.repeat)
    same = [{k: v for k, v in f.items() if k != "scheme"} for f in py.flows] == [
        {k: v for k, v in f.items() if k != "scheme"} for f in rs.flows
    ]
    n = py.callbacks
    print(f"link {a.link}, {a.duration_s:g} s simulated, best of {a.repeat}")
    print(f"Python controller: {t_py * 1e3:.1f} ms, {n} callbacks ({n / a.duration_s:.0f} per simulated s)")
    print(f"Rust twin:         {t_rs * 1e3:.1f} ms")
    print(f"cost per callback: {(t_py - t_rs) / n * 1e9:.0f} ns; same report: {same}")


if __name__ == "__main__":
    main()
