"""What the service confirmed, seen at the gateway (independently of the SDK's bookkeeping).

``GatewayObserver.wrap(invoke)`` wraps the gateway's ``invoke``: for every ack answered
200 it records, per (subscription, message id), when the answer left (the ack is durable
from then on); for every receive answered 200, the entries it dispatched with the time the
request *arrived*. An entry (or batch index) dispatched by a receive that arrived after a
confirmed ack of it is an acknowledged message delivered again: a violation.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from magnetar_local.events import HttpRequest, HttpResponse
from magnetar_local.gateway import Gateway

_ACTION = re.compile(
    r"^/v1/(?P<topic>(?:persistent|non-persistent)/[^/]+/[^/]+/[^/]+)/subscriptions/"
    r"(?P<sub>[^/]+)/consumers/[^/]+/(?P<action>ack|receive|nack)$"
)

EntryKey = tuple[str, int, int, int]  # (topic/subscription, ledger, entry, partition)


@dataclass
class GatewayObserver:
    """Confirmed acks and dispatches, by subscription; plus answers by status."""

    acked_at: dict[tuple[EntryKey, int], float] = field(default_factory=dict)
    dispatches: list[tuple[float, EntryKey, tuple[int, ...] | None]] = field(default_factory=list)
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def wrap(
        self, invoke: Callable[[HttpRequest], HttpResponse]
    ) -> Callable[[HttpRequest], HttpResponse]:
        """``invoke`` that records what it answered."""

        def observed(request: HttpRequest) -> HttpResponse:
            arrived = time.monotonic()
            response = invoke(request)
            # an answer the harness does not understand is not evidence
            with contextlib.suppress(ValueError, KeyError, TypeError):
                self._record(request, response, arrived)
            return response

        return observed

    def _record(self, request: HttpRequest, response: HttpResponse, arrived: float) -> None:
        match = _ACTION.match(request.raw_path)
        action = match.group("action") if match else "other"
        with self._lock:
            self.statuses[(action, response.status)] += 1
        if match is None or response.status != 200:
            return
        sub = f"{match.group('topic')}/{match.group('sub')}"  # topics differ between rounds
        if action == "ack":
            body = json.loads(request.body or b"{}")
            if body.get("cumulative"):
                return  # the workloads ack individually
            done = time.monotonic()
            with self._lock:
                for text in body.get("messageIds", []):
                    ledger, entry, partition, batch = (int(x) for x in text.split(":"))
                    self.acked_at.setdefault(((sub, ledger, entry, partition), batch), done)
        elif action == "receive":
            doc = json.loads(response.body)
            with self._lock:
                for e in doc.get("entries", []):
                    key = (sub, int(e["ledgerId"]), int(e["entryId"]), int(e["partition"]))
                    indexes = e.get("batchIndexes")
                    self.dispatches.append((arrived, key, tuple(indexes) if indexes else None))

    def acked_then_dispatched(self) -> list[str]:
        """Messages dispatched by a receive that arrived after their ack was confirmed."""
        with self._lock:
            acked = dict(self.acked_at)
            dispatches = list(self.dispatches)
        by_entry: dict[EntryKey, list[tuple[int, float]]] = {}
        for (key, batch), at in acked.items():
            by_entry.setdefault(key, []).append((batch, at))
        found = []
        for arrived, key, indexes in dispatches:
            for batch, at in by_entry.get(key, ()):
                if arrived > at and (indexes is None or batch in indexes or batch < 0):
                    sub, ledger, entry, partition = key
                    found.append(f"{sub}: {ledger}:{entry}:{partition}:{batch}")
        return sorted(set(found))

    def summary(self) -> dict[str, int]:
        """Answers by ``action status``, e.g. ``{"ack 200": 812, "receive 504": 3}``."""
        with self._lock:
            return {f"{a} {s}": n for (a, s), n in sorted(self.statuses.items())}


Invoke = Callable[[HttpRequest], HttpResponse]


@contextmanager
def wrapping(gateway: Gateway, wrap: Callable[[Invoke], Invoke]) -> Iterator[None]:
    """Within the block, ``gateway`` answers through ``wrap(its invoke)``; its own invoke
    comes back afterwards."""
    plain = gateway.invoke
    setattr(gateway, "invoke", wrap(plain))  # noqa: B010 - an instance override
    try:
        yield
    finally:
        setattr(gateway, "invoke", plain)  # noqa: B010


@contextmanager
def observing(gateway: Gateway) -> Iterator[GatewayObserver]:
    """Within the block, ``gateway``'s answers are recorded by the observer it yields."""
    observer = GatewayObserver()
    with wrapping(gateway, observer.wrap):
        yield observer
