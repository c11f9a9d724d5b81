"""The requests a ``MemoryService`` received, for tests to look at: each ``Recorded`` with
its *kind* — ``produce``, ``subscribe``, ``receive``, ``ack``, ``nack``... (``kind_of``) —
and the path under which the service serves presigned entry objects (``OBJECTS_PATH``)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OBJECTS_PATH", "Recorded", "kind_of"]

OBJECTS_PATH = "/_objects"

_TOPIC = r"/(?:persistent|non-persistent)/[^/]+/[^/]+/[^/]+"
_CONSUMERS = r"^/v1" + _TOPIC + r"/subscriptions/[^/]+/consumers"
KINDS: list[tuple[str, str, re.Pattern[str]]] = [
    (m, kind, re.compile(rx))
    for m, kind, rx in (
        ("GET", "list_topics", r"^/admin/v2/(?:persistent|non-persistent)/[^/]+/[^/]+$"),
        ("GET", "partitions", r"^/admin/v2" + _TOPIC + r"/partitions$"),
        ("PUT", "create_partitioned", r"^/admin/v2" + _TOPIC + r"/partitions$"),
        ("POST", "produce", r"^/v1" + _TOPIC + r"/messages$"),
        ("POST", "upload", r"^/v1" + _TOPIC + r"/uploads$"),
        ("POST", "register", r"^/v1" + _TOPIC + r"/producers$"),
        ("POST", "heartbeat", r"^/v1" + _TOPIC + r"/producers/[^/]+/heartbeat$"),
        ("DELETE", "release", r"^/v1" + _TOPIC + r"/producers/[^/]+$"),
        ("POST", "subscribe", _CONSUMERS + r"$"),
        ("DELETE", "close", _CONSUMERS + r"/[^/]+$"),
        ("POST", "action", _CONSUMERS + r"/[^/]+/(?P<action>\w+)$"),
        ("PUT", "s3_put", "^" + OBJECTS_PATH + "/"),
        ("GET", "s3_get", "^" + OBJECTS_PATH + "/"),
    )
]


@dataclass
class Recorded:
    """One request the service received. ``body``: the decoded entry of a produce (also of
    one by ``entryRef``), the list of decoded entries of a multi-entry produce, parsed JSON,
    or None for object uploads."""

    method: str
    kind: str  # produce, register, subscribe, receive, ack, nack, redeliver, close, ...
    path: str
    body: Any
    headers: dict
    at: float = field(default_factory=time.monotonic)
    query: dict = field(default_factory=dict)


def kind_of(method: str, path: str) -> str:
    """The kind of a request (``other`` for none of ``KINDS``)."""
    for m, kind, pattern in KINDS:
        match = pattern.match(path)
        if m == method and match:
            return match.group("action") if kind == "action" else kind
    return "other"
