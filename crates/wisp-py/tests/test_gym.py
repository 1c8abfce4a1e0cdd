"""wisp.gym.RateControlEnv: Gymnasium's checker, determinism, the observation against a fluid
model of the bottleneck, and the example policy against CBR."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")  # installed by scripts/test-python.sh
from gymnasium.utils.env_checker import check_env  # noqa: E402

from wisp.examples import policy  # noqa: E402
from wisp.gym import FIELDS, RateControlEnv  # noqa: E402

VERIZON = "trace:traces/cellular/Verizon-LTE-short.down"


@pytest.mark.parametrize("action", ["rate", "multiplier"])
def test_passes_gymnasiums_env_checker(action: str) -> None:
    env = RateControlEnv(link=[VERIZON, "const:3mbps"], action=action, episode_s=2)
    with warnings.catch_warnings():
        # Advice, not failures: an unnormalised Box and unbounded observations.
        warnings.simplefilter("ignore", UserWarning)
        check_env(env, skip_render_check=True)
    env.close()


def _trajectory(env: RateControlEnv, seed: int, actions: np.ndarray) -> tuple[list, list, str]:
    obs, info = env.reset(seed=seed)
    out, rewards = [obs], []
    for a in actions:
        obs, r, _, _, _ = env.step(np.array([a], dtype=np.float32))
        out.append(obs)
        rewards.append(r)
    return out, rewards, info["link"]


def test_reset_with_a_seed_replays_the_episode() -> None:
    links = [VERIZON, "trace:traces/cellular/TMobile-LTE-short.down"]
    actions = np.random.default_rng(0).uniform(500, 8000, 40)
    a = RateControlEnv(link=links, loss=0.02)
    b = RateControlEnv(link=links, loss=0.02)
    for seed in (1, 2, 3, 4):
        ta, ra, la = _trajectory(a, seed, actions)
        tb, rb, lb = _trajectory(b, seed, actions)
        assert la == lb
        assert all(np.array_equal(x, y) for x, y in zip(ta, tb)) and ra == rb
    # Different seeds draw different losses: the replay above is not a constant.
    assert _trajectory(a, 1, actions)[1] != _trajectory(a, 5, actions)[1] or \
        _trajectory(a, 1, actions)[2] != _trajectory(a, 5, actions)[2]
    a.close()
    b.close()


def test_observations_match_a_fluid_model_of_the_bottleneck() -> None:
    """2 Mbit/s, 20 ms each way, 1500-byte packets. Below capacity: what is sent arrives, the
    round trip is 40 ms + one packet's serialisation (6 ms), no loss, no gradient. At twice the
    capacity into an infinite queue: half arrives and the round trip grows by (r − c)/c = 1 s
    per second of sending."""
    env = RateControlEnv(link="const:2mbps", episode_s=3, start_kbps=1000)
    env.reset(seed=1)

    def mean_of(rate: float, steps: int) -> dict[str, float]:
        # Averaged over MIs: 4.2 packets per 50 ms at 1 Mbit/s, so one MI holds 4 or 5.
        obs = [env.step(np.array([rate], dtype=np.float32))[0] for _ in range(steps)]
        return dict(zip(FIELDS, np.mean(obs[steps // 2:], axis=0)))

    o = mean_of(1000.0, 20)
    assert o["send_kbps"] == pytest.approx(1000, rel=0.03)
    assert o["recv_kbps"] == pytest.approx(1000, rel=0.03)
    assert o["rtt_ms"] == pytest.approx(46, abs=0.5)
    assert o["rtt_ratio"] == pytest.approx(1, abs=0.01)
    assert o["loss_rate"] == 0 and abs(o["delay_gradient"]) < 0.01
    o = mean_of(4000.0, 30)
    assert o["send_kbps"] == pytest.approx(4000, rel=0.03)
    assert o["recv_kbps"] == pytest.approx(2000, rel=0.03)
    assert o["delay_gradient"] == pytest.approx(1.0, rel=0.05)
    assert o["rtt_ratio"] > 2
    env.close()


def test_a_full_drop_tail_queue_loses_what_the_link_cannot_carry() -> None:
    env = RateControlEnv(link="const:2mbps", episode_s=3, queue="droptail:packets=20")
    env.reset(seed=1)
    obs = [env.step(np.array([4000.0], dtype=np.float32))[0] for _ in range(50)]
    # (r − c)/r of the packets are dropped in the steady state.
    assert dict(zip(FIELDS, np.mean(obs[20:], axis=0)))["loss_rate"] == pytest.approx(0.5, abs=0.05)
    env.close()


def test_the_episode_is_truncated_after_episode_s() -> None:
    env = RateControlEnv(link="const:2mbps", episode_s=1, monitor_interval_ms=50)
    env.reset(seed=0)
    flags = [env.step(np.array([1000.0], dtype=np.float32))[3] for _ in range(20)]
    assert flags == [False] * 19 + [True]
    env.close()


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="nope"):
        RateControlEnv(link="trace:nope/missing.down")
    with pytest.raises(ValueError, match="action"):
        RateControlEnv(action="faster")
    env = RateControlEnv(link="const:2mbps", episode_s=1)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.array([1.0]))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.step(np.array([np.nan]))
    env.close()


def test_the_example_policy_beats_the_best_cbr_rate_on_its_trace() -> None:
    """The short version of `python -m wisp.examples.policy`: same trace, same seed, same
    reward; CBR gets its best rate of a grid."""
    env = RateControlEnv(link=VERIZON, episode_s=10)
    rate, cbr = policy.best_cbr(env, 1, np.geomspace(250, 16000, 25))
    w, ret = policy.search(env, 1, rounds=4, population=4)
    assert 250 <= rate <= 16000
    assert ret > cbr, (w, ret, rate, cbr)
    # The search started from the fixed point W0 and moved.
    assert not np.array_equal(w, policy.W0)
    env.close()


def test_an_action_that_is_not_one_number_is_refused() -> None:
    """A step takes one number: an empty or two-element action used to raise IndexError or run
    on its first element, None a message about NaN."""
    env = RateControlEnv(link="const:2mbps", episode_s=1)
    env.reset(seed=1)
    for bad in (np.array([]), np.array([[1000.0, 2000.0]]), None):
        with pytest.raises(ValueError, match="action: expected one number"):
            env.step(bad)
    with pytest.raises(TypeError, match="action"):
        env.step("fast")
    for good in (np.array([1000.0], dtype=np.float32), 1000.0, [1000], np.array([[1000.0]])):
        obs, _, _, _, _ = env.step(good)
        assert obs[6] == 1000.0
    env.close()
