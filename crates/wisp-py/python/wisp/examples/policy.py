"""A rate-control policy for :class:`wisp.gym.RateControlEnv`, found by a numpy-only random
search, against the best fixed-rate (CBR) sender on the same trace and seed.

The policy sets the next monitor interval's rate from the last one's observation:
``rate = max(recv_kbps, min_kbps) · exp(w · x)`` with ``x = (1, rtt_ratio − 1, delay_gradient,
loss_rate)`` — follow the delivery rate, probe upwards by ``exp(w₀)``, back off as the queue
(the round-trip time above its minimum) grows. The search is a (1 + λ) evolution strategy on
``w``: each round tries ``population`` Gaussian perturbations of the best ``w`` so far and keeps
one if its episode return is higher. CBR gets a search too: every rate of a grid, the best kept.
Both are scored by the environment's reward (Aurora's) over the same episode (same trace, same
seed), so the comparison is like for like.

    python -m wisp.examples.policy [--episode-s 30] [--rounds 30] [--population 8]
"""

from __future__ import annotations

import argparse
from typing import Callable, Sequence

import numpy as np

from wisp.gym import RateControlEnv

Act = Callable[[np.ndarray], float]
W0 = np.array([1.0, -1.0, -1.0, -2.0])


def linear_policy(w: np.ndarray, min_kbps: float = 50.0) -> Act:
    def act(obs: np.ndarray) -> float:
        x = np.array([1.0, obs[3] - 1.0, obs[4], obs[5]])
        return float(max(obs[1], min_kbps) * np.exp(np.clip(w @ x, -3.0, 3.0)))

    return act


def cbr_policy(rate_kbps: float) -> Act:
    return lambda obs: rate_kbps


def episode_return(env: RateControlEnv, act: Act, seed: int) -> float:
    """The undiscounted return of one episode (``reset(seed=seed)``)."""
    obs, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, _ = env.step(np.array([act(obs)], dtype=np.float32))
        total += r
        done = term or trunc
    return total


def episode_means(env: RateControlEnv, act: Act, seed: int) -> tuple[float, float, float]:
    """Mean ``recv_kbps``, ``rtt_ms`` and ``loss_rate`` over one episode's MIs."""
    obs, _ = env.reset(seed=seed)
    rows, done = [], False
    while not done:
        obs, _, term, trunc, _ = env.step(np.array([act(obs)], dtype=np.float32))
        rows.append(obs)
        done = term or trunc
    m = np.mean(rows, axis=0)
    return float(m[1]), float(m[2]), float(m[5])


def best_cbr(env: RateControlEnv, seed: int, rates: Sequence[float]) -> tuple[float, float]:
    """The CBR rate of ``rates`` with the highest return: ``(rate, return)``."""
    scored = [(episode_return(env, cbr_policy(r), seed), r) for r in rates]
    ret, rate = max(scored)
    return rate, ret


def search(env: RateControlEnv, seed: int, rounds: int = 30, population: int = 8,
           sigma: float = 0.3, search_seed: int = 0) -> tuple[np.ndarray, float]:
    """(1 + λ) random search on the linear policy's weights: ``(w, return)``."""
    rng = np.random.default_rng(search_seed)
    best_w = W0.copy()
    best = episode_return(env, linear_policy(best_w, env.min_kbps), seed)
    for _ in range(rounds):
        for _ in range(population):
            w = best_w + sigma * rng.standard_normal(best_w.shape)
            ret = episode_return(env, linear_policy(w, env.min_kbps), seed)
            if ret > best:
                best_w, best = w, ret
    return best_w, best


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="policy search vs. the best CBR rate")
    p.add_argument("--link", default="trace:traces/cellular/Verizon-LTE-short.down")
    p.add_argument("--episode-s", type=float, default=30.0)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--population", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    env = RateControlEnv(link=a.link, episode_s=a.episode_s)
    rate, cbr = best_cbr(env, a.seed, np.geomspace(250, 16000, 25))
    w, ret = search(env, a.seed, a.rounds, a.population)
    print(f"{a.link}, {a.episode_s:g}-s episode, seed {a.seed}")
    for name, act, r in (("best CBR", cbr_policy(rate), cbr), ("policy", linear_policy(w, env.min_kbps), ret)):
        kbps, rtt, loss = episode_means(env, act, a.seed)
        print(f"{name:8}: return {r:.0f}; {kbps:.0f} kbit/s received, RTT {rtt:.0f} ms, loss {loss:.3f}")
    print(f"CBR rate {rate:.0f} kbit/s; policy w={np.round(w, 3).tolist()} "
          f"({'beats' if ret > cbr else 'does not beat'} CBR)")
    env.close()


if __name__ == "__main__":
    main()
