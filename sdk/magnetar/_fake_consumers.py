"""The consumer side of ``FakeService``: subscribe, receive (long poll, ``format: entry``,
large entries by URL), ack, nack (``delayMs`` / ``backoff`` held as the service holds them,
without its tick), redeliver, close and unsubscribe, as docs/http-api.md describes them."""

from __future__ import annotations

import base64
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from magnetar_wire import parse_message_id

__all__ = ["ConsumerRoutes"]


@dataclass
class _Sub:
    type: str
    next_read: int
    consumers: dict = field(default_factory=dict)  # id -> name
    inflight: dict = field(default_factory=dict)  # entry index -> consumer id
    redeliver: deque = field(default_factory=deque)
    acked: dict = field(default_factory=dict)  # entry index -> set of batch indexes / "all"
    redeliveries: dict = field(default_factory=dict)  # entry index -> count
    held: dict = field(default_factory=dict)  # entry index -> monotonic time of a nack's delay


class ConsumerRoutes:
    """Mixin of ``FakeService`` (uses its ``lock``, ``entries``, ``subs``, ids and the
    producer side's ``inline_receive_bytes`` / ``blob_url``)."""

    lock: Any
    entries: dict
    subs: dict
    _ids: Any

    def _subscribe(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            key = (a["topic"], a["sub"])
            log = self.entries.setdefault(a["topic"], [])
            sub = self.subs.get(key)
            if sub is None:
                start = 0 if body.get("initialPosition") == "Earliest" else len(log)
                sub = self.subs[key] = _Sub(body.get("subscriptionType", "Exclusive"), start)
            if body.get("subscriptionType") not in ("Exclusive", "Shared"):
                return 400, {"error": "NotAllowedError", "message": "type not supported"}
            if sub.consumers and (sub.type == "Exclusive" or body["subscriptionType"] != sub.type):
                return 409, {
                    "error": "ConsumerBusy",
                    "message": "Exclusive consumer is already connected",
                }
            cid = f"c{next(self._ids)}"
            name = body.get("consumerName") or f"fake-{cid}"
            sub.consumers[cid] = name
        return 200, {"consumerId": cid, "consumerName": name, "subscription": a["sub"],
                     "topic": a["topic"]}  # fmt: skip

    def _sub(self, a: dict) -> _Sub | None:
        sub = self.subs.get((a["topic"], a["sub"]))
        return sub if sub is not None and a["cid"] in sub.consumers else None

    def _receive(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        deadline = time.monotonic() + body.get("waitMs", 0) / 1000
        with self.lock:
            while True:
                sub = self._sub(a)
                if sub is None:
                    return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
                out = self._dispatch(a, sub, body.get("maxMessages", 100))
                remaining = deadline - time.monotonic()
                if out or remaining <= 0:
                    return 200, {"entries": out}
                if sub.held:  # wake when the first held nack is due
                    remaining = min(remaining, max(min(sub.held.values()) - time.monotonic(), 0))
                self.lock.wait(remaining)

    def _dispatch(self, a: dict, sub: _Sub, max_messages: int) -> list[dict]:
        log = self.entries.get(a["topic"], [])
        out: list[dict] = []
        count = inline = 0
        now = time.monotonic()
        for idx, due in sorted(sub.held.items()):
            if due <= now:
                del sub.held[idx]
                sub.redeliver = deque(sorted({*sub.redeliver, idx}))
        while count < max_messages:
            if sub.redeliver:
                idx = sub.redeliver.popleft()
            elif sub.next_read < len(log):
                idx = sub.next_read
                sub.next_read += 1
            else:
                break
            raw, n = log[idx]
            acked = sub.acked.get(idx, set())
            if acked == "all" or len(acked) >= n:
                continue
            sub.inflight[idx] = a["cid"]
            mask = sorted(set(range(n)) - acked) if acked else None
            count += n - len(acked)
            m = re.search(r"-partition-(\d+)$", a["topic"])
            inline += len(raw)
            data = {"data": base64.b64encode(raw).decode()}
            if inline > self.inline_receive_bytes:  # the rest by URL, as the service does
                data = {"data": None, "url": self.blob_url(raw)}
            out.append({"ledgerId": 1, "entryId": idx, "partition": int(m.group(1)) if m else -1,
                        "redeliveryCount": sub.redeliveries.get(idx, 0), "batchIndexes": mask,
                        **data, "topic": a["topic"].replace("/", "://", 1)})  # fmt: skip
        return out

    def _ack(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            if body.get("cumulative") and sub.type == "Shared":
                return 400, {"error": "CumulativeAcknowledgementNotAllowedError", "message": "no"}
            for text in body["messageIds"]:
                _, entry, _, batch = parse_message_id(text)
                targets = range(entry + 1) if body.get("cumulative") else [entry]
                for idx in targets:
                    if batch < 0 or idx < entry:
                        sub.acked[idx] = "all"
                    elif sub.acked.get(idx) != "all":
                        sub.acked.setdefault(idx, set()).add(batch)
                    acked = sub.acked[idx]
                    if acked == "all" or len(acked) >= self.entries[a["topic"]][idx][1]:
                        sub.inflight.pop(idx, None)
        return 200, {"acknowledged": len(body["messageIds"])}

    def _back(self, sub: _Sub, indexes: list[int], delay_ms: Any = None) -> int:
        """Send entries back (count + 1), at once or held for ``delay_ms(count)`` ms."""
        for idx in sorted(set(indexes)):
            sub.inflight.pop(idx, None)
            count = sub.redeliveries.get(idx, 0)
            sub.redeliveries[idx] = count + 1
            held = delay_ms(count) if delay_ms is not None else 0
            if held > 0:
                sub.held[idx] = time.monotonic() + held / 1000
            else:
                sub.redeliver.append(idx)
        sub.redeliver = deque(sorted(set(sub.redeliver)))
        self.lock.notify_all()
        return len(set(indexes))

    def _nack(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        """Honours ``delayMs`` and ``backoff`` as the service does (without its tick)."""
        backoff = body.get("backoff")

        def delay_ms(count: int) -> float:
            if backoff is None:
                return body.get("delayMs", 0)
            low, high = backoff.get("minDelayMs", 1000), backoff.get("maxDelayMs", 60_000)
            return low if count <= 0 else min(high, low * backoff.get("multiplier", 2) ** count)

        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            idx = [parse_message_id(t)[1] for t in body["messageIds"]]
            moved = self._back(sub, [i for i in idx if i in sub.inflight], delay_ms)
            return 200, {"redelivered": moved}

    def _redeliver(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            mine = [i for i, c in sub.inflight.items() if c == a["cid"]]
            return 200, {"redelivered": self._back(sub, mine)}

    def _close(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            self._back(sub, [i for i, c in sub.inflight.items() if c == a["cid"]])
            del sub.consumers[a["cid"]]
        return 200, {"closed": True}

    def _unsubscribe(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            sub = self._sub(a)
            if sub is None:
                return 404, {"error": "ConsumerNotFound", "message": "unknown consumer"}
            if len(sub.consumers) > 1:
                return 409, {"error": "ConsumerBusy", "message": "other consumers connected"}
            del self.subs[(a["topic"], a["sub"])]
        return 200, {"unsubscribed": True}
