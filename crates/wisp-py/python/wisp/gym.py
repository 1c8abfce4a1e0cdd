"""A Gymnasium environment over wisp's simulator: :class:`RateControlEnv`.

Each step sets the sending rate for one monitor interval (MI) and observes what a sender can
know at its end, from its own sends and the receiver's per-packet acknowledgements (as Aurora's
simulator: Jay et al., "A Deep Reinforcement Learning Perspective on Internet Congestion
Control", ICML 2019):

========  ==================  ===============================================================
index     name                meaning
========  ==================  ===============================================================
0         ``send_kbps``       bytes sent in the MI × 8 / MI
1         ``recv_kbps``       bytes acknowledged in the MI × 8 / MI
2         ``rtt_ms``          mean round-trip time of the MI's acknowledgements
3         ``rtt_ratio``       ``rtt_ms`` / the smallest round-trip time of the episode so far
4         ``delay_gradient``  slope of the round-trip time against the send time (s/s)
5         ``loss_rate``       packets found lost / (lost + acknowledged) in the MI
6         ``rate_kbps``       the rate the sender used in the MI
========  ==================  ===============================================================

The reward is Aurora's: ``a·throughput − b·latency − c·loss`` with throughput in 1500-byte
packets per second (``recv_kbps``), latency in seconds (``rtt_ms``) and the loss rate; the
weights ``reward=(a, b, c)`` default to Aurora's (10, 1000, 2000).

The action is the rate in kbit/s (``action="rate"``, a ``Box(min_kbps, max_kbps, (1,))``) or
Aurora's multiplier (``action="multiplier"``, a ``Box(-10, 10, (1,))``: the rate is multiplied by
1 + 0.025·a for a ≥ 0 and divided by 1 − 0.025·a otherwise, then kept within the bounds).

Episodes last ``episode_s`` (truncated; never terminated); each draws its link from ``link`` (a
spec or a list of specs, as ``wisp run --link``) and its simulation seed from the environment's
random generator, so ``reset(seed=s)`` replays the same episode. One episode is one simulation on
a thread of its own, paused at every MI's end.

Requires ``gymnasium`` (``pip install 'wisp[gym]'``).
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import _wisp

__all__ = ["FIELDS", "RateControlEnv"]

#: The observation's fields, in order.
FIELDS: tuple[str, ...] = (
    "send_kbps",
    "recv_kbps",
    "rtt_ms",
    "rtt_ratio",
    "delay_gradient",
    "loss_rate",
    "rate_kbps",
)

_LOW = np.array([0, 0, 0, 0, -np.inf, 0, 0], dtype=np.float32)
_HIGH = np.array([np.inf, np.inf, np.inf, np.inf, np.inf, 1, np.inf], dtype=np.float32)
_DELTA = 0.025  # Aurora's multiplier step


class RateControlEnv(gym.Env[np.ndarray, np.ndarray]):
    """Rate control over a simulated link, one monitor interval per step (see the module)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        link: str | Sequence[str] = "trace:traces/cellular/Verizon-LTE-short.down",
        monitor_interval_ms: float = 50.0,
        episode_s: float = 10.0,
        reward: tuple[float, float, float] = (10.0, 1000.0, 2000.0),
        action: str = "rate",
        min_kbps: float = 50.0,
        max_kbps: float = 20000.0,
        start_kbps: float = 1000.0,
        delay_ms: float = 20.0,
        queue: str | None = None,
        loss: str | float | None = None,
    ) -> None:
        specs = [link] if isinstance(link, str) else list(link)
        if not specs:
            raise ValueError("link: names no link")
        self._links = [_wisp.Link.load(s) for s in specs]
        if action not in ("rate", "multiplier"):
            raise ValueError(f"action: `{action}` is neither `rate` nor `multiplier`")
        if not 0 < min_kbps <= start_kbps <= max_kbps:
            raise ValueError("need 0 < min_kbps <= start_kbps <= max_kbps")
        if len(reward) != 3:
            raise ValueError("reward: three weights (throughput, latency, loss)")
        self.monitor_interval_ms = float(monitor_interval_ms)
        self.steps = int(round(episode_s * 1000.0 / self.monitor_interval_ms))
        if self.steps < 1:
            raise ValueError("episode_s: shorter than one monitor interval")
        self.reward_weights = tuple(float(w) for w in reward)
        self.action_mode = action
        self.min_kbps, self.max_kbps, self.start_kbps = float(min_kbps), float(max_kbps), float(start_kbps)
        self._run = dict(delay_ms=float(delay_ms), queue=queue, loss=None if loss is None else str(loss))
        self.observation_space = spaces.Box(_LOW, _HIGH, dtype=np.float32)
        if action == "rate":
            self.action_space = spaces.Box(np.float32(min_kbps), np.float32(max_kbps), (1,), np.float32)
        else:
            self.action_space = spaces.Box(np.float32(-10), np.float32(10), (1,), np.float32)
        self._episode: _wisp.GymEpisode | None = None
        self._t = 0
        self._rate = self.start_kbps
        self._link_name = ""

    def _reward(self, obs: tuple[float, ...]) -> float:
        a, b, c = self.reward_weights
        return a * obs[1] * 1000.0 / 8.0 / 1500.0 - b * obs[2] / 1000.0 - c * obs[5]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.close()
        link = self._links[int(self.np_random.integers(len(self._links)))]
        sim_seed = int(self.np_random.integers(0, 2**63 - 1))
        self._link_name = link.name
        self._episode = _wisp.GymEpisode(
            link, self.steps + 1, self.monitor_interval_ms, self.start_kbps, seed=sim_seed, **self._run
        )
        self._t = 0
        self._rate = self.start_kbps
        obs = self._episode.step(None)
        return np.array(obs, dtype=np.float32), {"link": self._link_name, "seed": sim_seed}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._episode is None:
            raise RuntimeError("step() before reset()")
        a = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        if self.action_mode == "rate":
            rate = a
        else:
            rate = self._rate * (1 + _DELTA * a) if a >= 0 else self._rate / (1 - _DELTA * a)
        if not np.isfinite(rate):
            raise ValueError(f"action: {action!r} gives no finite rate")
        self._rate = min(max(rate, self.min_kbps), self.max_kbps)
        obs = self._episode.step(self._rate)
        self._t += 1
        truncated = self._t >= self.steps
        return np.array(obs, dtype=np.float32), self._reward(obs), False, truncated, {"link": self._link_name}

    def close(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None
