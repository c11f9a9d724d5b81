"""A consumer's redelivery settings and the ``POST .../nack`` bodies they make (see
``magnetar._consumer.acks``): the negative-ack delay or backoff, the ack timeout and its backoff."""

from __future__ import annotations

import math
from dataclasses import dataclass

from magnetar._policies import MultiplierRedeliveryBackoff, backoff_body

__all__ = ["Redelivery"]


@dataclass(frozen=True)
class Redelivery:
    """A consumer's redelivery settings (ms): nack delay or backoff (the backoff wins, as
    in Pulsar), ack timeout (0: off), its tick and optional backoff."""

    nack_delay_ms: int = 60_000
    nack_backoff: MultiplierRedeliveryBackoff | None = None
    ack_timeout_ms: int = 0
    tick_ms: int = 1000
    ack_timeout_backoff: MultiplierRedeliveryBackoff | None = None

    def nack_body(
        self, ids: list[str], delay_ms: int | None = None, seen: dict[str, int] | None = None
    ) -> dict:
        """The ``POST .../nack`` body of a negative acknowledgement (``delay_ms``: what is
        left of the delay of a nack that waited in the client; ``seen``: the redelivery
        count each id was delivered with, where known, so the service ignores the request
        if it comes again after the copy was redelivered)."""
        body: dict = {"messageIds": ids}
        if self.nack_backoff is not None:
            body["backoff"] = backoff_body(self.nack_backoff)
        else:
            body["delayMs"] = self.nack_delay_ms if delay_ms is None else delay_ms
        if seen:
            body["redeliveryCounts"] = seen
        return body

    def nack_left_ms(self, waited_seconds: float) -> int | None:
        """What is left (ms) of the delay of a nack that waited ``waited_seconds`` in the
        client (None: the whole delay, or the backoff)."""
        if self.nack_backoff is not None or waited_seconds < 0.001:
            return None
        return max(0, math.ceil(self.nack_delay_ms - waited_seconds * 1000))

    def timeout_bodies(self, due: dict[str, int | None], most: int) -> list[dict]:
        """The ``POST .../nack`` bodies sending back messages whose ack timeout passed (id
        text -> the redelivery count it came with, None: unknown), at most ``most`` each."""
        ids, out = list(due), []
        for i in range(0, len(ids), most):
            body: dict = {"messageIds": ids[i : i + most]}
            if self.ack_timeout_backoff is not None:
                body["backoff"] = backoff_body(self.ack_timeout_backoff)
            seen = {t: c for t in body["messageIds"] if (c := due[t]) is not None}
            if seen:
                body["redeliveryCounts"] = seen
            out.append(body)
        return out

    @staticmethod
    def now_body(ids: list[str], seen: int | None = None) -> dict:
        """The ``POST .../nack`` body sending ``ids`` back at once (``seen``: the redelivery
        count they were delivered with, when known)."""
        if seen is None:
            return {"messageIds": ids}
        return {"messageIds": ids, "redeliveryCounts": dict.fromkeys(ids, seen)}

    def nack_hold_seconds(self, least: float) -> float:
        """How long a batch message's nack may wait for the batch's other messages handed
        to the application: its delay (the backoff's least), and at least ``least``."""
        delay = self.nack_backoff.min_delay_ms if self.nack_backoff else self.nack_delay_ms
        return max(delay / 1000, least)
