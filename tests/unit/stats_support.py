"""Helpers of the stats tests on the memory service: produce, subscribe, receive/ack as a
consumer, and read the admin stats, each through the HTTP edge (``subscribe`` is
edge_http's)."""

from __future__ import annotations

import base64
import json

from edge_http import call, subscribe

__all__ = [
    "Clock",
    "b64",
    "call",
    "close",
    "consumer_call",
    "produce",
    "stats",
    "stored_bytes",
    "subscribe",
]


def produce(svc, path: str, *payloads: str) -> list[str]:
    body = {"messages": [{"payload": p} for p in payloads]}
    status, answer, _ = call(f"{svc.url}/v1/{path}/messages", body=json.dumps(body).encode())
    assert status == 200, answer
    return answer["messageIds"]


def consumer_call(svc, path: str, sub: str, consumer: str, verb: str, body: dict):
    url = f"{svc.url}/v1/{path}/subscriptions/{sub}/consumers/{consumer}/{verb}"
    status, answer, _ = call(url, body=json.dumps(body).encode())
    assert status == 200, answer
    return answer


def stats(svc, path: str, kind: str = "stats") -> dict:
    status, answer, _ = call(f"{svc.url}/admin/v2/{path}/{kind}", method="GET")
    assert status == 200, answer
    return answer


def stored_bytes(svc, path: str) -> int:
    key = svc.key_of(path)
    head = svc.stores.log.head(key)
    return sum(e.length for e in svc.stores.log.get_many(key, range(head + 1)).values())


def close(svc, path: str, sub: str, consumer: str) -> None:
    url = f"{svc.url}/v1/{path}/subscriptions/{sub}/consumers/{consumer}"
    status, answer, _ = call(url, method="DELETE")
    assert status == 200, answer


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Clock:
    """An engine's wall clock (epoch ms), moved by the test."""

    def __init__(self, now_ms: int) -> None:
        self.now = now_ms

    def __call__(self) -> int:
        return self.now
