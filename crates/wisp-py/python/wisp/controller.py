"""Controllers written in Python: subclass :class:`Sender` and :class:`Receiver` and run the pair
in the simulator with ``wisp.run(scheme=wisp.Controller(MySender, MyReceiver), link=…)``.

The hooks are the Rust contract's (``docs/adding-a-scheme.md``, ``wisp_core::controller``), with
Python types: times are ``float`` seconds since the start of the run, rates ``float`` kbit/s,
sizes ``int`` bytes. The receiver's feedback messages are ``bytes`` (``struct.pack`` them; they
cost the reverse path their length plus a 3-byte frame header) and the sender's per-packet header
fields are ``bytes`` of at most 16. A hook a class does not override is never called.

A hook that raises, or returns what the contract does not allow, stops the run:
:func:`wisp.run` raises :class:`ControllerError` naming the class, the hook, the simulated time
and the problem (the original exception is its ``__cause__``).
"""

from __future__ import annotations

from typing import Any, Callable

from . import _wisp

__all__ = ["Controller", "ControllerError", "Packet", "Rate", "Receiver", "Sender", "Window"]

ControllerError = _wisp.ControllerError
Rate = _wisp.Rate
Window = _wisp.Window
Packet = _wisp.Packet

_SENDER_HOOKS = ("on_packet_sent", "on_feedback", "on_time", "allowance", "poll_timeout", "on_timeout")
_RECEIVER_HOOKS = ("on_packet_received", "poll_feedback", "poll_timeout", "on_timeout")


class Sender:
    """The sending half of a scheme. Override :meth:`allowance` and :meth:`on_feedback`; the
    other hooks are optional."""

    def on_packet_sent(self, now: float, packet: Packet) -> bytes | None:
        """A packet leaves now; return its header fields (``bytes``, at most 16) or ``None``."""
        return None

    def on_feedback(self, now: float, feedback: bytes) -> None:
        """A feedback message from the receiver arrived (the ``bytes`` it returned)."""

    def on_time(self, now: float) -> None:
        """Time has reached ``now`` (called before each :meth:`allowance` query)."""

    def allowance(self, now: float) -> float | Rate | Window:
        """How much may be sent now: a rate in kbit/s (paced at that rate), a
        :class:`Rate` (target and pacing rates) or a :class:`Window` (bytes). A query: it
        should change nothing."""
        raise NotImplementedError(f"{type(self).__name__}.allowance")

    def poll_timeout(self) -> float | None:
        """When :meth:`on_timeout` should next be called (seconds), or ``None``."""
        return None

    def on_timeout(self, now: float) -> None:
        """The time :meth:`poll_timeout` asked for has come."""


class Receiver:
    """The receiving half of a scheme. Override :meth:`on_packet_received` and
    :meth:`poll_feedback`; the timers are optional."""

    def on_packet_received(self, now: float, packet: Packet, fields: bytes) -> None:
        """A data packet arrived now, with the header fields its sender returned."""

    def poll_feedback(self, now: float) -> bytes | None:
        """The next feedback message to send (``bytes``, at most 1200), or ``None``. Called
        after every arrival and every timeout until it returns ``None``."""
        return None

    def poll_timeout(self) -> float | None:
        """When :meth:`on_timeout` should next be called (seconds), or ``None``."""
        return None

    def on_timeout(self, now: float) -> None:
        """The time :meth:`poll_timeout` asked for has come."""


def _overridden(obj: object, base: type, hooks: tuple[str, ...]) -> list[str]:
    cls = type(obj)
    return [h for h in hooks if getattr(cls, h, None) is not getattr(base, h)]


def _factory(make: Callable[[], Any], base: type, hooks: tuple[str, ...]) -> Callable[[], Any]:
    def build() -> tuple[Any, str, list[str]]:
        obj = make()
        if not isinstance(obj, base):
            raise TypeError(
                f"{getattr(make, '__name__', make)!s}() returned {obj!r}: expected a wisp.{base.__name__}"
            )
        return obj, type(obj).__qualname__, _overridden(obj, base, hooks)

    return build


class Controller:
    """A scheme written in Python: the factories of its two halves (classes, or any callables
    returning a new :class:`Sender` / :class:`Receiver`; each flow of a run gets new ones).

    >>> scheme = wisp.Controller(AimdSender, AimdReceiver)          # doctest: +SKIP
    >>> wisp.run(scheme=scheme, link="const:2mbps", duration_s=10)   # doctest: +SKIP
    """

    def __init__(
        self,
        sender: Callable[[], Sender],
        receiver: Callable[[], Receiver],
        name: str | None = None,
    ) -> None:
        if not callable(sender) or not callable(receiver):
            raise TypeError("Controller(sender, receiver): both must be callables (classes)")
        name = name or getattr(sender, "__name__", "python")
        self._native = _wisp.Controller(
            name,
            _factory(sender, Sender, _SENDER_HOOKS),
            _factory(receiver, Receiver, _RECEIVER_HOOKS),
        )

    @property
    def name(self) -> str:
        """The name reports carry in their ``scheme`` field."""
        return self._native.name

    @staticmethod
    def rust_example_aimd(
        start_kbps: float = 300.0,
        target_s: float = 0.040,
        beta: float = 0.85,
        step_kbps: float = 50.0,
        interval_s: float = 0.050,
    ) -> Controller:
        """The Rust twin of :mod:`wisp.examples.aimd` (crate wisp-core, ``src/scheme/example_aimd.rs``)."""
        c = Controller.__new__(Controller)
        c._native = _wisp.Controller.rust_example_aimd(start_kbps, target_s, beta, step_kbps, interval_s)
        return c

    def __repr__(self) -> str:
        return f"wisp.Controller({self.name!r})"
