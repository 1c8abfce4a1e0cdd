"""AIMD on delay, written in Python: the example of ``docs/python.md``.

The receiver reports every ``interval_s`` (from the first arrival) the largest one-way delay it
saw and the packets it counted since its last report (12 bytes, ``<dI``); the sender adds
``step_kbps`` per report while that delay stays within ``target_s`` of the smallest reported, and
multiplies its rate by ``beta`` otherwise. Its Rust twin is ``wisp.Controller.rust_example_aimd``
(crate wisp-core, ``src/scheme/example_aimd.rs``); a test checks that both give the same report to the last bit.

>>> import wisp
>>> from wisp.examples.aimd import controller
>>> wisp.run(scheme=controller(), link="const:2mbps", duration_s=10).throughput_kbps  # doctest: +SKIP
"""

from __future__ import annotations

import struct

import wisp

REPORT = struct.Struct("<dI")


class AimdSender(wisp.Sender):
    def __init__(self, start_kbps: float = 300.0, target_s: float = 0.040, beta: float = 0.85,
                 step_kbps: float = 50.0) -> None:
        self.rate_kbps = start_kbps
        self.target_s = target_s
        self.beta = beta
        self.step_kbps = step_kbps
        self.min_delay: float | None = None

    def on_feedback(self, now: float, feedback: bytes) -> None:
        max_delay, packets = REPORT.unpack(feedback)
        if packets == 0:
            return
        if self.min_delay is None or max_delay < self.min_delay:
            self.min_delay = max_delay
        if max_delay > self.min_delay + self.target_s:
            self.rate_kbps *= self.beta
        else:
            self.rate_kbps += self.step_kbps

    def allowance(self, now: float) -> float:
        return self.rate_kbps  # kbit/s, paced at the same rate


class AimdReceiver(wisp.Receiver):
    def __init__(self, interval_s: float = 0.050) -> None:
        self.interval_s = interval_s
        self.max_delay = 0.0
        self.packets = 0
        self.next: float | None = None
        self.due = False

    def on_packet_received(self, now: float, packet: wisp.Packet, fields: bytes) -> None:
        d = now - packet.send_time
        if d > self.max_delay:
            self.max_delay = d
        self.packets += 1
        if self.next is None:
            self.next = now + self.interval_s

    def poll_feedback(self, now: float) -> bytes | None:
        if not self.due:
            return None
        self.due = False
        report = REPORT.pack(self.max_delay, self.packets)
        self.max_delay = 0.0
        self.packets = 0
        return report

    def poll_timeout(self) -> float | None:
        return self.next

    def on_timeout(self, now: float) -> None:
        if self.next is not None and self.next <= now:
            self.due = True
            self.next = now + self.interval_s


def controller(**kwargs: float) -> wisp.Controller:
    """The example as a scheme; keyword arguments go to the sender, but ``interval_s`` to the
    receiver."""
    interval_s = kwargs.pop("interval_s", 0.050)
    return wisp.Controller(lambda: AimdSender(**kwargs), lambda: AimdReceiver(interval_s),
                           name="example-aimd (Python)")
