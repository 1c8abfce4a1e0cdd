"""Steps per second of wisp.gym.RateControlEnv on one core (the process is pinned to CPU 0):
whole episodes at a fixed rate, timed from reset to the last step.

    python crates/wisp-py/examples/gym_speed.py [--link SPEC] [--mi-ms 50] [--rate-kbps N] [--episodes N]

Run it by hand (from the repository root); it asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from wisp.gym import RateControlEnv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--link", default="trace:traces/cellular/Verizon-LTE-short.down")
    p.add_argument("--mi-ms", type=float, default=50.0)
    p.add_argument("--rate-kbps", type=float, default=3000.0)
    p.add_argument("--episodes", type=int, default=20)
    a = p.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # threads started later inherit it
    env = RateControlEnv(link=a.link, monitor_interval_ms=a.mi_ms, episode_s=10.0, max_kbps=1e6)
    action = np.array([a.rate_kbps], dtype=np.float32)
    steps = 0
    t = time.perf_counter()
    for ep in range(a.episodes):
        env.reset(seed=ep)
        done = False
        while not done:
            _, _, term, trunc, _ = env.step(action)
            steps += 1
            done = term or trunc
    dt = time.perf_counter() - t
    env.close()
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else "?"
    print(f"link {a.link}, MI {a.mi_ms:g} ms, {a.rate_kbps:g} kbit/s, CPUs {cpus}: "
          f"{steps} steps in {dt:.3f} s = {steps / dt:.0f} steps/s")


if __name__ == "__main__":
    main()
