"""Controllers written in Python (wisp.Sender / wisp.Receiver through wisp.Controller)."""

from __future__ import annotations

import math
import struct

import pandas as pd
import pytest

import wisp
from wisp.examples import aimd

LINKS = ["trace:traces/cellular/Verizon-LTE-short.down", "const:2mbps"]


def _metrics(r: wisp.RunResult) -> list[dict]:
    return [{k: v for k, v in f.items() if k != "scheme"} for f in r.flows]


@pytest.mark.parametrize("link", LINKS)
def test_the_python_example_matches_its_rust_twin_bit_for_bit(link: str) -> None:
    kw = dict(link=link, duration_s=30, warmup_s=2, seed=5, loss=0.01)
    py = wisp.run(scheme=aimd.controller(), **kw)
    rust = wisp.run(scheme=wisp.Controller.rust_example_aimd(), **kw)
    assert py.callbacks > 1000, "the Python halves ran"
    assert rust.callbacks == 0
    # The AIMD did adapt (not a constant rate): its rate moved both ways.
    assert py.packets_sent > 100 and py.packets_lost > 0
    assert _metrics(py) == _metrics(rust)  # every metric, to the last bit
    pd.testing.assert_frame_equal(py.timeseries, rust.timeseries, check_exact=True)
    pd.testing.assert_frame_equal(py.packets, rust.packets, check_exact=True)
    # and it is not the same figures as a fixed rate would give
    cbr = wisp.run(scheme="cbr:rate-kbps=300", **kw)
    assert cbr.throughput_kbps != py.throughput_kbps


def test_a_python_controller_shares_the_bottleneck_with_built_in_schemes() -> None:
    """One flow each of the Python example, GCC and a 1-Mbit/s CBR on one link: the same figures
    as with the Rust twin in its place, to the last bit."""
    kw = dict(link="const:6mbps", duration_s=20, seed=3, queue="droptail:packets=60")
    py = wisp.run(scheme=[aimd.controller(), "gcc-remb", "cbr:rate-kbps=1000"], **kw)
    rust = wisp.run(scheme=[wisp.Controller.rust_example_aimd(), "gcc-remb", "cbr:rate-kbps=1000"], **kw)
    assert [f["scheme"] for f in py.flows][1:] == ["gcc-remb", "cbr:rate-kbps=1000"]
    assert all(f["packets_delivered"] > 100 for f in py.flows)
    assert _metrics(py) == _metrics(rust)
    pd.testing.assert_frame_equal(py.packets, rust.packets, check_exact=True)
    with pytest.raises(ValueError, match="one flow each"):
        wisp.run(scheme=["gcc-remb", "cubic"], link="const:6mbps", flows=2)


def test_the_twin_comparison_can_fail() -> None:
    """Different parameters on one side give different figures: the comparison above is not
    vacuous."""
    kw = dict(link=LINKS[0], duration_s=20, seed=5)
    py = wisp.run(scheme=aimd.controller(beta=0.8), **kw)
    rust = wisp.run(scheme=wisp.Controller.rust_example_aimd(beta=0.85), **kw)
    assert _metrics(py) != _metrics(rust)


class Stamper(wisp.Sender):
    """A window sender that stamps each packet's sequence number; its feedback acknowledges."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.acked: list[int] = []

    def on_packet_sent(self, now: float, packet: wisp.Packet) -> bytes:
        self.in_flight += packet.size
        return struct.pack("<Q", packet.seq)

    def on_feedback(self, now: float, feedback: bytes) -> None:
        seq, size = struct.unpack("<QI", feedback)
        self.acked.append(seq)
        self.in_flight -= size

    def allowance(self, now: float) -> wisp.Window:
        return wisp.Window(max(0, 15000 - self.in_flight))


class Echo(wisp.Receiver):
    def __init__(self) -> None:
        self.pending: list[bytes] = []

    def on_packet_received(self, now: float, packet: wisp.Packet, fields: bytes) -> None:
        (seq,) = struct.unpack("<Q", fields)
        assert seq == packet.seq
        self.pending.append(struct.pack("<QI", seq, packet.size))

    def poll_feedback(self, now: float) -> bytes | None:
        return self.pending.pop(0) if self.pending else None


def test_header_fields_and_feedback_cross_the_path_and_each_flow_has_its_own_halves() -> None:
    made: list[Stamper] = []

    def sender() -> Stamper:
        made.append(Stamper())
        return made[-1]

    r = wisp.run(scheme=wisp.Controller(sender, Echo, name="window"), link="const:4mbps",
                 duration_s=5, flows=2)
    assert r.scheme == "window"
    assert len(made) == 2 and made[0] is not made[1]
    for s, f in zip(made, r.flows):
        # every delivered packet was acknowledged with its own stamp, in order
        assert len(s.acked) > 100
        assert s.acked == sorted(s.acked)
        assert f["packets_delivered"] >= len(s.acked)
    # A 15-kB window over 40 ms of round trip is about 3 Mbit/s in all: the link is shared.
    total = sum(f["throughput_kbps"] for f in r.flows)
    assert 1500 < total <= 4000


class Base(aimd.AimdSender):
    pass


def _run(sender, receiver=aimd.AimdReceiver) -> wisp.RunResult:
    return wisp.run(scheme=wisp.Controller(sender, receiver), link="const:2mbps", duration_s=5)


class RaisesInFeedback(Base):
    def on_feedback(self, now: float, feedback: bytes) -> None:
        raise ZeroDivisionError("on purpose")


class GarbageAllowance(Base):
    def allowance(self, now: float):
        return "fast"


class NanAllowance(Base):
    def allowance(self, now: float):
        return float("nan")


class PastTimeout(Base):
    def poll_timeout(self) -> float:
        return -1.0


class LongFields(Base):
    def on_packet_sent(self, now: float, packet: wisp.Packet) -> bytes:
        return bytes(17)


class BusyLoop(Base):
    """Keeps asking to be woken at a time already served (the simulator wakes it 1 ns later,
    again and again)."""

    t = 0.1

    def poll_timeout(self) -> float:
        return self.t

    def on_timeout(self, now: float) -> None:
        pass


class StrFeedback(aimd.AimdReceiver):
    def poll_feedback(self, now: float):
        return "report" if self.packets else None


@pytest.mark.parametrize(
    "sender, receiver, words",
    [
        (RaisesInFeedback, aimd.AimdReceiver, ["RaisesInFeedback.on_feedback", "ZeroDivisionError", "on purpose"]),
        (GarbageAllowance, aimd.AimdReceiver, ["GarbageAllowance.allowance", "'fast'", "str", "kbit/s"]),
        (NanAllowance, aimd.AimdReceiver, ["NanAllowance.allowance", "nan"]),
        (PastTimeout, aimd.AimdReceiver, ["PastTimeout.poll_timeout", "-1.0", "not negative"]),
        (LongFields, aimd.AimdReceiver, ["LongFields.on_packet_sent", "at most 16"]),
        (aimd.AimdSender, StrFeedback, ["StrFeedback.poll_feedback", "'report'", "bytes"]),
        (BusyLoop, aimd.AimdReceiver, ["BusyLoop.poll_timeout", "busy loop", "t=0.1000"]),
    ],
)
def test_a_controller_that_raises_or_returns_garbage_raises_a_controller_error(sender, receiver, words) -> None:
    with pytest.raises(wisp.ControllerError) as e:
        _run(sender, receiver)
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    assert " at t=" in str(e.value)


def test_the_original_exception_is_the_cause() -> None:
    with pytest.raises(wisp.ControllerError) as e:
        _run(RaisesInFeedback)
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_bad_factories() -> None:
    with pytest.raises(wisp.ControllerError, match="expected a wisp.Sender"):
        _run(lambda: object())
    with pytest.raises(wisp.ControllerError, match="boom"):
        _run(lambda: 1 / 0 if False else (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(TypeError):
        wisp.Controller(3, aimd.AimdReceiver)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="spec string or a wisp.Controller"):
        wisp.run(scheme=3, link="const:1mbps")  # type: ignore[arg-type]


def test_a_sender_without_allowance_names_the_missing_hook() -> None:
    class Lazy(wisp.Sender):
        pass

    with pytest.raises(wisp.ControllerError, match="Lazy.allowance.*NotImplementedError"):
        _run(Lazy)


def test_the_rust_twin_checks_its_parameters(capped) -> None:
    out = capped(
        """
        try:
            wisp.run(wisp.Controller.rust_example_aimd(interval_s=0), "const:1mbps", duration_s=1)
        except ValueError as e:
            print("ValueError:", e)
        """
    )
    assert "ValueError: interval_s" in out
    for kw, name in [
        (dict(start_kbps=math.nan), "start_kbps"),
        (dict(start_kbps=-1), "start_kbps"),
        (dict(beta=1.5), "beta"),
        (dict(beta=0), "beta"),
        (dict(target_s=-1), "target_s"),
        (dict(step_kbps=math.inf), "step_kbps"),
    ]:
        with pytest.raises(ValueError, match=name):
            wisp.Controller.rust_example_aimd(**kw)
    wisp.Controller.rust_example_aimd(beta=1, step_kbps=0, target_s=0)  # the edges are fine


def test_an_unpaced_window_that_never_shrinks_is_a_controller_error(capped) -> None:
    out = capped(
        """
        class Greedy(wisp.Sender):
            def allowance(self, now):
                return wisp.Window(2**40)      # never counts what it sent
        try:
            wisp.run(wisp.Controller(Greedy, wisp.Receiver), "const:2mbps", duration_s=1)
        except wisp.ControllerError as e:
            print("ControllerError:", e)
        """
    )
    assert "ControllerError: Greedy.allowance at t=0.000000 s" in out and "busy loop" in out


def test_a_poll_feedback_that_never_returns_none_is_a_controller_error(capped) -> None:
    out = capped(
        """
        class Chatty(wisp.Receiver):
            def poll_feedback(self, now):
                return b"x"
        class S(wisp.Sender):
            def allowance(self, now):
                return 500.0
        try:
            wisp.run(wisp.Controller(S, Chatty), "const:2mbps", duration_s=1)
        except wisp.ControllerError as e:
            print("ControllerError:", e)
        """
    )
    assert "ControllerError: Chatty.poll_feedback" in out and "busy loop" in out


def test_a_window_sender_that_counts_its_packets_still_runs() -> None:
    """The guard leaves a sane window alone: 20 packets in flight, back to back."""

    class Win(wisp.Sender):
        def __init__(self) -> None:
            self.in_flight = 0

        def on_packet_sent(self, now, packet):
            self.in_flight += packet.size
            return struct.pack("<I", packet.size)

        def on_feedback(self, now, feedback):
            (acked,) = struct.unpack("<I", feedback)
            self.in_flight -= acked

        def allowance(self, now):
            return wisp.Window(max(0, 30_000 - self.in_flight))

    class Ack(wisp.Receiver):
        def __init__(self) -> None:
            self.acked = []

        def on_packet_received(self, now, packet, fields):
            self.acked.append(fields)

        def poll_feedback(self, now):
            return self.acked.pop() if self.acked else None

    r = wisp.run(wisp.Controller(Win, Ack), "const:2mbps", duration_s=5)
    assert r.throughput_kbps > 1500


def test_keyboard_interrupt_in_a_hook_stays_a_keyboard_interrupt() -> None:
    """Ctrl-C lands in whatever Python code runs, usually a hook: it must stop the run as
    KeyboardInterrupt (as the docs say), not as a ControllerError blaming the controller."""

    class Interrupted(wisp.Sender):
        def allowance(self, now):
            if now > 0.1:
                raise KeyboardInterrupt
            return 500.0

    with pytest.raises(KeyboardInterrupt):
        wisp.run(wisp.Controller(Interrupted, wisp.Receiver), "const:2mbps", duration_s=1)

    class Exits(wisp.Sender):
        def allowance(self, now):
            raise SystemExit(3)

    with pytest.raises(SystemExit):
        wisp.run(wisp.Controller(Exits, wisp.Receiver), "const:2mbps", duration_s=1)


def test_rate_and_window_check_their_arguments() -> None:
    """At construction, naming the argument (Window(-1) was a bare OverflowError, Rate(nan)
    was accepted and failed later, inside the run)."""
    for make, words in [
        (lambda: wisp.Rate(math.nan), "Rate: kbps NaN"),
        (lambda: wisp.Rate(-1), "Rate: kbps -1"),
        (lambda: wisp.Rate(1e9), "Rate: kbps 1000000000"),
        (lambda: wisp.Rate(100, pacing_kbps=math.inf), "Rate: pacing_kbps inf"),
        (lambda: wisp.Window(-1), "Window: bytes -1"),
        (lambda: wisp.Window(2**64), "Window: bytes"),
        (lambda: wisp.Window(1500, pacing_kbps=math.nan), "Window: pacing_kbps NaN"),
    ]:
        with pytest.raises(ValueError) as e:
            make()
        assert words in str(e.value), str(e.value)
    assert wisp.Rate(0).pacing_kbps == 0 and wisp.Rate(1e8, pacing_kbps=50).pacing_kbps == 50
    assert wisp.Window(0).bytes == 0 and wisp.Window(2**64 - 1).bytes == 2**64 - 1
