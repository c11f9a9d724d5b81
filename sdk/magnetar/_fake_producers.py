"""The producer side of ``FakeService``: registration with access modes and epochs,
heartbeats, release, deduplication, the size limit, and large entries through a fake S3
(``/_s3/{ref}``: PUT by the client, GET for receives), as docs/http-api.md describes them.

Deduplication follows the contract: with it on, an entry whose highest sequence id is at or
below the producer name's last committed one is acknowledged as a duplicate; only a
non-chunk entry or a message's LAST chunk advances the last committed sequence id (every chunk
of a message carries the same sequence id).
"""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

__all__ = ["PRODUCER_ROUTES", "ProducerRoutes"]

_TOPIC = r"/(?P<topic>(?:persistent|non-persistent)/[^/]+/[^/]+/[^/]+)"
PRODUCER_ROUTES = [
    ("POST", "register", re.compile(r"^/v1" + _TOPIC + r"/producers$")),
    ("POST", "heartbeat", re.compile(r"^/v1" + _TOPIC + r"/producers/(?P<name>[^/]+)/heartbeat$")),
    ("DELETE", "release", re.compile(r"^/v1" + _TOPIC + r"/producers/(?P<name>[^/]+)$")),
    ("POST", "upload", re.compile(r"^/v1" + _TOPIC + r"/uploads$")),
    ("PUT", "s3_put", re.compile(r"^/_s3/(?P<ref>[^/]+)$")),
    ("GET", "s3_get", re.compile(r"^/_s3/(?P<ref>[^/]+)$")),
]


def _fenced(message: str) -> tuple[int, dict]:
    return 409, {"error": "ProducerFenced", "message": message}


class ProducerRoutes:
    """Mixin of ``FakeService`` (uses its ``lock``, ``url``). Knobs for tests: ``dedup``
    (all topics), ``max_message_size``, ``lease_ms``, ``inline_receive_bytes``."""

    lock: Any
    url: str

    def _init_producers(self) -> None:
        self.dedup = False
        self.max_message_size = 5 * 1024 * 1024
        self.lease_ms = 30_000
        self.inline_receive_bytes = 3 * 1024 * 1024
        self.epochs: dict[str, int] = {}  # topic -> access epoch
        self.holders: dict[str, tuple[str, int]] = {}  # topic -> exclusive (name, epoch)
        self.last_seq: dict[tuple[str, str], int] = {}  # (topic, producer name) -> seq
        self.blobs: dict[str, bytes] = {}  # fake S3 objects
        self._names = itertools.count()
        self._refs = itertools.count()

    def _register(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        topic, mode = a["topic"], body.get("accessMode", "Shared")
        deadline = time.monotonic() + body.get("waitMs", 0) / 1000
        with self.lock:
            name = body.get("producerName") or f"fake-producer-{next(self._names)}"
            while self.holders.get(topic):
                if mode in ("Shared", "Exclusive"):
                    return _fenced(f"exclusive producer {self.holders[topic][0]} holds {topic}")
                if mode == "ExclusiveWithFencing":
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return 409, {"error": "ProducerBusy", "message": "still held"}
                self.lock.wait(remaining)
            epoch = self.epochs.get(topic, 0)
            if mode != "Shared":
                epoch = self.epochs[topic] = epoch + 1
                self.holders[topic] = (name, epoch)
                self.lock.notify_all()
            last = self.last_seq.get((topic, name), -1) if self.dedup else -1
        return 200, {"producerName": name, "epoch": epoch, "lastSequenceId": last,
                     "maxMessageSize": self.max_message_size, "deduplication": self.dedup,
                     "leaseMs": self.lease_ms, "topic": topic.replace("/", "://", 1)}  # fmt: skip

    def _heartbeat(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        epoch = int(a["query"].get("epoch", -1))
        with self.lock:
            if self.holders.get(a["topic"]) != (a["name"], epoch):
                return _fenced("the lease was lost")
        return 200, {"epoch": epoch}

    def _release(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        epoch = int(a["query"].get("epoch", -1))
        with self.lock:
            if self.holders.get(a["topic"]) == (a["name"], epoch):
                del self.holders[a["topic"]]
                self.lock.notify_all()
        return 200, {}

    def _upload(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        ref = f"up-{next(self._refs)}"
        return 200, {"uploadUrl": f"{self.url}/_s3/{ref}", "entryRef": ref,
                     "expiresInSeconds": 900}  # fmt: skip

    def _s3_put(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            self.blobs[a["ref"]] = raw
        return 200, None

    def _s3_get(self, a: dict, body: Any, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            blob = self.blobs.get(a["ref"])
        return (200, blob) if blob is not None else (404, {"error": "NoSuchKey", "message": ""})

    def blob_url(self, raw: bytes) -> str:
        """Store ``raw`` in the fake S3 and return its GET URL (lock held)."""
        ref = f"get-{next(self._refs)}"
        self.blobs[ref] = raw
        return f"{self.url}/_s3/{ref}"

    def admit(self, a: dict, decoded: Any, raw: bytes) -> tuple[int, Any] | None:
        """Check a produce (lock held): size, epoch, deduplication. Returns the response of
        a refused or duplicate entry, or None to commit it (then its sequence id counts)."""
        topic = a["topic"]
        if len(raw) > self.max_message_size:
            return 413, {"error": "MessageTooBig", "message": f"{len(raw)} bytes"}
        epoch, holder = a["query"].get("epoch"), self.holders.get(topic)
        if (epoch is None and holder) or (
            epoch is not None and int(epoch) < self.epochs.get(topic, 0)
        ):
            return _fenced("an exclusive producer took the topic over")
        if not self.dedup:
            return None
        key = (topic, decoded.producer_name)
        seq = max(m.sequence_id for m in decoded.messages)
        if seq <= self.last_seq.get(key, -1):
            m = re.search(r"-partition-(\d+)$", topic)
            part = int(m.group(1)) if m else -1
            return 200, {"messageIds": [f"-1:-1:{part}:-1"], "ledgerId": -1, "entryId": -1,
                         "partition": part, "topic": topic.replace("/", "://", 1),
                         "duplicate": True}  # fmt: skip
        chunk = decoded.messages[-1].chunk
        if chunk is None or chunk.chunk_id == chunk.total_chunks - 1:
            self.last_seq[key] = seq
        return None
