"""Where each consumer's time goes in a drain (the JSON report's ``consumers``): when it
got its first message, the cold starts it waited for, its receives served from its grant
and those that went to the cursor item (taking a grant, long-polling), and the cursor
writes its receives lost to another writer. Each client's requests run in its own
greenlet, so a store call or a cold start is the consumer's whose greenlet made it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import greenlet


@dataclass
class ConsumerTrace:
    """One consumer's accounting (virtual ms)."""

    first_ms: float | None = None
    """When it first got a message, after the subscription's first delivery."""
    cold_start_ms: float = 0.0
    cold_starts: int = 0
    received: int = 0
    served_receives: int = 0
    """Receives answered from the consumer's grant item (no cursor read or write)."""
    served_ms: float = 0.0
    cursor_receives: int = 0
    """Receives that wrote the cursor item and got messages (took a grant)."""
    cursor_ms: float = 0.0
    empty_receives: int = 0
    """Receives that read the cursor item and got nothing (the backlog's end)."""
    last_ms: float | None = None
    cursor_writes: int = 0
    lost_races: int = 0
    """Conditional cursor writes of its receives that lost to another writer."""
    slot_receives: int = 0
    """Receives that read the cursor item and took a dispatch round's slot (no write)."""
    slot_ms: float = 0.0
    read_cursor: bool = False
    """The request in flight read the cursor item."""
    wrote_cursor: bool = False
    """The request in flight wrote (or tried to write) the cursor item."""
    receiving: bool = False
    """A receive is in flight (the cursor writes of subscribe and close are not counted)."""

    def receive_started(self) -> None:
        self.read_cursor = self.wrote_cursor = False
        self.receiving = True

    def receive_done(self, started_ms: float, now_ms: float, messages: int) -> None:
        """Account one receive that took ``started_ms`` to ``now_ms``."""
        if self.read_cursor and not messages:
            self.empty_receives += 1
        elif self.read_cursor and not self.wrote_cursor:
            self.slot_receives += 1
            self.slot_ms += now_ms - started_ms
        elif self.read_cursor:
            self.cursor_receives += 1
            self.cursor_ms += now_ms - started_ms
        elif messages:
            self.served_receives += 1
            self.served_ms += now_ms - started_ms
        self.read_cursor = self.wrote_cursor = self.receiving = False
        self.received += messages
        if messages and self.first_ms is None:
            self.first_ms = now_ms
        if messages:
            self.last_ms = now_ms


class Traces:
    """The consumers' traces, by consumer name; store calls and cold starts are charged
    to the consumer whose greenlet makes them."""

    def __init__(self) -> None:
        self.by_name: dict[str, ConsumerTrace] = {}
        self._of: dict[Any, ConsumerTrace] = {}

    def enter(self, name: str) -> ConsumerTrace:
        """The calling greenlet is consumer ``name`` from now on."""
        trace = self.by_name.setdefault(name, ConsumerTrace())
        self._of[greenlet.getcurrent()] = trace
        return trace

    def current(self) -> ConsumerTrace | None:
        return self._of.get(greenlet.getcurrent())

    def cold_start(self, ms: float) -> None:
        trace = self.current()
        if trace is not None:
            trace.cold_starts += 1
            trace.cold_start_ms += ms

    def store_call(self, store: str, method: str, error: BaseException | None) -> None:
        trace = self.current()
        if trace is None or store != "cursors" or not trace.receiving:
            return
        if method == "get":
            trace.read_cursor = True
        if method == "put":
            trace.wrote_cursor = True
            trace.cursor_writes += 1
            if error is not None and type(error).__name__ == "ConditionFailed":
                trace.lost_races += 1

    def report(self, first_delivery_ms: float | None) -> dict[str, dict[str, Any]]:
        """Each consumer's figures, the first message relative to the first delivery."""
        out: dict[str, dict[str, Any]] = {}
        for name, t in sorted(self.by_name.items(), key=lambda kv: int(kv[0][1:] or 0)):
            first = last = None
            if t.first_ms is not None and first_delivery_ms is not None:
                first = round(t.first_ms - first_delivery_ms, 1)
            if t.last_ms is not None and first_delivery_ms is not None:
                last = round(t.last_ms - first_delivery_ms, 1)
            out[name] = {
                "first_message_ms": first,
                "last_message_ms": last,
                "received": t.received,
                "cold_starts": t.cold_starts,
                "cold_start_ms": round(t.cold_start_ms, 1),
                "served_from_grant": t.served_receives,
                "served_ms_mean": round(t.served_ms / t.served_receives, 1)
                if t.served_receives
                else None,
                "cursor_receives": t.cursor_receives,
                "cursor_receive_ms": round(t.cursor_ms, 1),
                "slot_receives": t.slot_receives,
                "slot_receive_ms": round(t.slot_ms, 1),
                "empty_receives": t.empty_receives,
                "cursor_writes": t.cursor_writes,
                "lost_cursor_races": t.lost_races,
            }
        return out
