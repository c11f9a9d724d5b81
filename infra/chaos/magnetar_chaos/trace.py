"""A trace of the requests of chosen subscriptions at the gateway, to explain a broken
invariant after the fact (it explained reliability finding 7, an order violation too rare
to catch under a debugger).

``tracing(gateway, subscriptions)`` records every request on those subscriptions' consumer
routes (subscribe, receive, ack, nack, redeliver, heartbeat, close) with its arrival and
answer times, status, body and answer, cheaply (raw bytes; parsed only when rendered).
``explain(report, trace)`` renders, for each partition with a ``key_order`` violation, that
partition's requests in arrival order: the dispatched entries and batch indexes with their
redelivery counts, and what each ack and nack named.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from magnetar_chaos.observer import wrapping
from magnetar_local.events import HttpRequest, HttpResponse
from magnetar_local.gateway import Gateway

_ROUTE = re.compile(
    r"^/v1/(?:persistent|non-persistent)/[^/]+/[^/]+/[^/]+?(?:-partition-(?P<p>\d+))?"
    r"/subscriptions/(?P<sub>[^/]+)/consumers(?:/(?P<consumer>[^/]+))?(?:/(?P<action>\w+))?$"
)
_VIOLATION = re.compile(r"^(?P<sub>\S+) key \S+: \S+ at \((?P<p>-?\d+),")
Record = tuple[float, float, str, str, int, bytes, bytes]


@dataclass
class RequestTrace:
    """Requests on ``subscriptions``' consumer routes, in arrival order."""

    subscriptions: frozenset[str]
    records: list[Record] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def wrap(
        self, invoke: Callable[[HttpRequest], HttpResponse]
    ) -> Callable[[HttpRequest], HttpResponse]:
        """``invoke`` that records the requests of the traced subscriptions."""

        def traced(request: HttpRequest) -> HttpResponse:
            arrived = time.monotonic()
            response = invoke(request)
            match = _ROUTE.match(request.raw_path)
            if match is not None and match.group("sub") in self.subscriptions:
                record = (arrived, time.monotonic(), request.method, request.raw_path,
                          response.status, request.body or b"", response.body or b"")  # fmt: skip
                with self._lock:
                    self.records.append(record)
            return response

        return traced

    def lines(self, subscription: str, partition: int, limit: int = 300) -> list[str]:
        """The requests of one subscription on one partition (-1: not partitioned)."""
        with self._lock:
            records = sorted(self.records)
        out = []
        for arrived, answered, method, path, status, body, answer in records:
            match = _ROUTE.match(path)
            if match is None or match.group("sub") != subscription:
                continue
            if int(match.group("p") or -1) != partition:
                continue
            what = match.group("action") or ("close" if method == "DELETE" else "subscribe")
            consumer = (match.group("consumer") or "")[-6:]
            out.append(f"{arrived - self.started:8.3f} +{answered - arrived:.3f} {consumer:6s} "
                       f"{what:10s} {status} {_detail(what, status, body, answer)}")  # fmt: skip
        return out[-limit:]


def _detail(action: str, status: int, body: bytes, answer: bytes) -> str:
    """What a request named or got: entries ``entry[batch indexes]@count``, message ids."""
    try:
        if action == "receive" and status == 200:
            entries = json.loads(answer).get("entries", [])
            return " ".join(f"{e['entryId']}{e.get('batchIndexes') or ''}@{e.get('redeliveryCount')}"
                            for e in entries)  # fmt: skip
        if action in ("ack", "nack"):
            doc = json.loads(body or b"{}")
            ids = [t.split(":")[1] + ":" + t.split(":")[3] for t in doc.get("messageIds", [])]
            seen = sorted(set((doc.get("redeliveryCounts") or {}).values()))
            return f"{' '.join(ids)} seen={seen} delay={doc.get('delayMs')}"
        if action == "subscribe" and status == 200:
            return str(json.loads(answer).get("consumerId", ""))[-6:]
    except (ValueError, KeyError, IndexError, AttributeError):
        pass
    return answer[:120].decode(errors="replace") if status != 200 else ""


def explain(report: dict[str, Any], trace: RequestTrace) -> str:
    """The traced requests of every (subscription, partition) with a key order violation."""
    wanted: set[tuple[str, int]] = set()
    for text in report["invariants"].get("key_order", {}).get("violations", []):
        match = _VIOLATION.match(text)
        if match is not None:
            wanted.add((match.group("sub"), int(match.group("p"))))
    parts = []
    for sub, partition in sorted(wanted):
        parts.append(f"--- {sub}, partition {partition}: seconds from start, +answer time, "
                     "consumer, request, status, entries[batch indexes]@redelivery count")  # fmt: skip
        parts.extend(trace.lines(sub, partition))
    return "\n".join(parts)


@contextmanager
def tracing(gateway: Gateway, subscriptions: set[str]) -> Iterator[RequestTrace]:
    """Within the block, ``gateway``'s requests on ``subscriptions`` are traced."""
    trace = RequestTrace(frozenset(subscriptions))
    with wrapping(gateway, trace.wrap):
        yield trace
