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

This class is Gymnasium's interface only: the scheme, the observation, the reward, the action's
meaning and the stepping are wisp-sim's monitor-interval environment (``wisp_sim::interval``,
``crates/wisp-sim/src/interval.rs``), which Rust programs use without Python.

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
        self._native = _wisp.RateControl(
            specs,
            float(monitor_interval_ms),
            float(episode_s),
            [float(w) for w in reward],
            action,
            float(min_kbps),
            float(max_kbps),
            float(start_kbps),
            delay_ms=float(delay_ms),
            queue=queue,
            loss=None if loss is None else str(loss),
        )
        self.monitor_interval_ms = float(monitor_interval_ms)
        self.steps = self._native.steps
        self.reward_weights = tuple(float(w) for w in reward)
        self.action_mode = action
        self.min_kbps, self.max_kbps, self.start_kbps = float(min_kbps), float(max_kbps), float(start_kbps)
        self._link_names = self._native.link_names
        self.observation_space = spaces.Box(_LOW, _HIGH, dtype=np.float32)
        if action == "rate":
            self.action_space = spaces.Box(np.float32(min_kbps), np.float32(max_kbps), (1,), np.float32)
        else:
            self.action_space = spaces.Box(np.float32(-10), np.float32(10), (1,), np.float32)
        self._link_name = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        link = int(self.np_random.integers(len(self._link_names)))
        sim_seed = int(self.np_random.integers(0, 2**63 - 1))
        self._link_name = self._link_names[link]
        obs = self._native.reset(link, sim_seed)
        return np.array(obs, dtype=np.float32), {"link": self._link_name, "seed": sim_seed}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        try:
            values = np.asarray(action, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError(f"action: expected a number or an array of one, not {action!r}") from None
        if action is None or values.size != 1:
            shape = np.shape(action) if action is not None else None
            raise ValueError(f"action: expected one number (the action space's shape (1,)), got {action!r} (shape {shape})")
        a = float(values[0])
        obs, reward, done = self._native.step(a)
        return np.array(obs, dtype=np.float32), reward, False, done, {"link": self._link_name}

    def close(self) -> None:
        self._native.close()
