"""The speed-up of wisp.run_grid on a Dask LocalCluster of 2 worker processes over 1 (one thread
each): a 40-run grid (2 schemes × 2 traces × 10 seeds), timed after the cluster has started.

    python crates/wisp-py/examples/grid_speedup.py [--duration-s 600]

Run it by hand (from the repository root); it asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd
from dask.distributed import Client, LocalCluster

import wisp


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration-s", type=float, default=600.0)
    a = p.parse_args()
    grid = {
        "schemes": ["sprout", "gcc"],
        "links": ["trace:traces/cellular/Verizon-LTE-short.down", "trace:traces/cellular/TMobile-LTE-short.down"],
        "seeds": range(1, 11),
        "duration_s": a.duration_s,
        "loss": 0.01,
    }
    frames, times = {}, {}
    for n in (1, 2):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0") as c, \
                Client(c) as client:
            wisp.run_grid({**grid, "seeds": [1], "duration_s": 1}, client=client)  # warm the workers
            t = time.perf_counter()
            frames[n] = wisp.run_grid(grid, client=client)
            times[n] = time.perf_counter() - t
    t = time.perf_counter()
    local = wisp.run_grid(grid)
    t_local = time.perf_counter() - t
    pd.testing.assert_frame_equal(frames[1], frames[2], check_exact=True)
    pd.testing.assert_frame_equal(frames[1], local, check_exact=True)
    print(f"40 runs of {a.duration_s:g} s: 1 worker {times[1]:.2f} s, 2 workers {times[2]:.2f} s "
          f"(speed-up {times[1] / times[2]:.2f}), local threads {t_local:.2f} s; frames equal; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
