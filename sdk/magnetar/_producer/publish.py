"""Building and posting entries: the size limit, chunking, and large entries by reference.

- ``build_entries`` encodes one batch, or one message, into the entries to commit: one entry
  when it fits ``maxMessageSize`` (the whole entry: header, metadata and stored payload, as the
  service checks it), else chunks when chunking is on, else ``MessageTooBig``.
- ``post_entry`` commits one entry: inline up to ``INLINE_MAX_BYTES``, else through
  ``POST .../uploads``, a plain PUT to the presigned URL and ``{"entryRef": ...}``;
  ``commit_entry`` retries it while nothing was stored, and ``entry_message_ids`` reads the
  messages' ids from the answer.

Chunks (Pulsar's chunking): the message is first encoded whole, compressed; only if that
entry is too big is the *uncompressed* payload cut into slices, each its own non-batched entry
with the same sequence id, metadata and ``ChunkInfo(uuid, id, total, totalSize)``; the uuid is
Pulsar's ``<producer name>-<sequence id>``. Each chunk is compressed on its own (so every entry
decodes alone) and falls back to NONE when compression would push it over the limit.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import requests

from magnetar import exceptions as exc
from magnetar._transport.failures import RETRYABLE
from magnetar.message_id import MessageId
from magnetar_wire import ChunkInfo, Codec, EntryMessage, encode_entry

HELD_OR_RETRYABLE: tuple[type[exc.PulsarException], ...] = (
    *RETRYABLE,
    exc.ProducerBlockedQuotaExceededError,
)
"""What a commit retries until its deadline: a backlog quota's hold too."""


def retry_pause(error: exc.PulsarException, pause: float, remaining: float | None) -> float:
    """Seconds to wait before resending after ``error``: a jittered ``pause`` (half to
    whole), at least the wait the service asked for (``error.retry_after``, its Retry-After),
    never past the send deadline (``remaining`` seconds; None: no deadline)."""
    wait = max(random.uniform(pause / 2, pause), error.retry_after or 0.0)
    return wait if remaining is None else max(0.0, min(wait, remaining))


if TYPE_CHECKING:
    from magnetar._transport.http import Transport
    from magnetar_wire.entry import Encrypt

    from .registration import Lease

__all__ = [
    "ENTRY_CONTENT_TYPE",
    "INLINE_MAX_BYTES",
    "build_entries",
    "commit_entry",
    "entry_message_ids",
    "post_entry",
]

ENTRY_CONTENT_TYPE = "application/vnd.magnetar.entry"
# docs/http-api/producing.md, inlineMaxBytes: larger entries go through S3
INLINE_MAX_BYTES = 1 << 20
_DIGITS_SLACK = 16  # size / chunk id digits the overhead probe may under-count


def build_entries(
    messages: list[EntryMessage],
    *,
    producer: str,
    codec: Codec,
    batched: bool,
    max_size: int,
    chunking: bool,
    encrypt: Encrypt | None = None,
) -> list[bytes]:
    """The entries that carry ``messages`` (several only for a chunked message), each
    compressed then, with ``encrypt``, encrypted under its own data key (end-to-end
    encryption; a chunk too).

    Raises:
        MessageTooBig: the entry exceeds ``max_size`` and cannot be chunked.
        EntryFormatError: the messages cannot be encoded.
    """
    entry = encode_entry(messages, producer_name=producer, codec=codec, batched=batched,
                         encrypt=encrypt)  # fmt: skip
    if len(entry) <= max_size:
        return [entry]
    if batched or len(messages) != 1 or not chunking:
        what = f"a batch of {len(messages)} messages" if batched else "the message"
        raise exc.MessageTooBig(
            f"{what} makes an entry of {len(entry)} bytes, above the topic's maximum message "
            f"size of {max_size} bytes; enable chunking (chunking_enabled=True) or send less"
        )
    return _chunks(messages[0], producer, codec, max_size, encrypt)


def _chunks(msg: EntryMessage, producer: str, codec: Codec, max_size: int,
            encrypt: Encrypt | None) -> list[bytes]:  # fmt: skip
    payload = bytes(msg.payload)
    uuid = f"{producer}-{msg.sequence_id}"
    probe = dataclasses.replace(
        msg, payload=b"", chunk=ChunkInfo(uuid, 10**9 - 1, 10**9, len(payload))
    )
    overhead = len(encode_entry([probe], producer_name=producer, encrypt=encrypt)) + _DIGITS_SLACK
    budget = max_size - overhead
    if budget <= 0:
        raise exc.MessageTooBig(
            f"the message's metadata alone ({overhead} bytes) fills the maximum message size "
            f"of {max_size} bytes, so it cannot be chunked"
        )
    total = math.ceil(len(payload) / budget)
    out = []
    for i in range(total):
        part = dataclasses.replace(msg, payload=payload[i * budget : (i + 1) * budget],
                                   chunk=ChunkInfo(uuid, i, total, len(payload)))  # fmt: skip
        entry = encode_entry([part], producer_name=producer, codec=codec, batched=False,
                             encrypt=encrypt)  # fmt: skip
        if len(entry) > max_size:
            entry = encode_entry([part], producer_name=producer, codec=Codec.NONE,
                                 batched=False, encrypt=encrypt)  # fmt: skip
        out.append(entry)
    return out


def post_entry(
    t: Transport, base: str, entry: bytes, epoch: int | None, timeout: float | None
) -> Any:
    """Commit one entry to the topic or partition at ``base`` (``/v1/{domain}/...``).

    Raises:
        PulsarException: the service's error (``ProducerFenced``, ``MessageTooBig``, ...),
            ``Timeout`` / ``ConnectError`` for the request or the upload.
    """
    query = f"?epoch={epoch}" if epoch is not None else ""
    if len(entry) <= INLINE_MAX_BYTES:
        return t.call("POST", f"{base}/messages{query}", data=entry,
                      content_type=ENTRY_CONTENT_TYPE, timeout=timeout)  # fmt: skip
    upload = t.call("POST", f"{base}/uploads", json_body={}, timeout=timeout)
    if not isinstance(upload, dict) or not upload.get("uploadUrl") or not upload.get("entryRef"):
        raise exc.UnknownError(f"unexpected uploads response: {upload!r}")
    read_timeout = t.operation_timeout if timeout is None else timeout
    try:
        resp = requests.put(upload["uploadUrl"], data=entry, verify=t.verify,
                            timeout=(t.connect_timeout, read_timeout or None))  # fmt: skip
    except requests.exceptions.Timeout:
        raise exc.Timeout(f"uploading a {len(entry)}-byte entry timed out") from None
    except requests.exceptions.RequestException as e:
        raise exc.ConnectError(f"cannot upload a {len(entry)}-byte entry: {e}") from None
    if resp.status_code >= 300:
        raise exc.UnknownError(
            f"uploading a {len(entry)}-byte entry failed: HTTP {resp.status_code} {resp.text[:200]}"
        )
    return t.call("POST", f"{base}/messages{query}", json_body={"entryRef": upload["entryRef"]},
                  timeout=timeout)  # fmt: skip


def commit_entry(t: Transport, lease: Lease, entry: bytes, deadline: float | None,
                 aborted: Callable[[], bool],
                 before_attempt: Callable[[], None] | None = None) -> Any:  # fmt: skip
    """Commit one entry, retrying (jittered, doubling up to 1 s, at least the service's
    Retry-After: ``retry_pause``) while the service says nothing was stored — ``ServiceUnitNotReady`` (commit contention) or
    ``TooManyRequests`` (a publish rate holds it) or ``ProducerBlockedQuotaExceededError``
    (a producer_request_hold backlog quota: raised once the deadline passes, as
    pulsar-client's) — as pulsar-client resends until ``send_timeout_millis``
    (``deadline``, seconds of ``time.monotonic``; None: no limit) or until ``aborted()``;
    and after an answer that says nothing either way — a gateway timeout (a Lambda that
    timed out or crashed, perhaps after storing), a 5xx, a broken connection — as
    pulsar-client resends its pending messages after a reconnect: with the same sequence
    ids, so with deduplication on the service drops a copy already stored (without it a
    duplicate is possible: at-least-once). ``before_attempt`` runs before each try (the
    producer registers again after a cluster switch there; its retryable errors are retried
    too). Raises the service's error, or Timeout once the deadline passes."""
    pause = 0.02
    held: exc.ProducerBlockedQuotaExceededError | None = None
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            if held is not None:  # a backlog quota held it to the end: Pulsar's error
                raise held
            raise exc.Timeout("the message was not stored within send_timeout_millis")
        try:
            if before_attempt is not None:
                before_attempt()
            return post_entry(t, lease.base, entry, lease.epoch, remaining)
        except HELD_OR_RETRYABLE as e:
            if aborted():
                raise
            held = e if isinstance(e, exc.ProducerBlockedQuotaExceededError) else None
            time.sleep(retry_pause(e, pause, _remaining(deadline)))
            pause = min(pause * 2, 1.0)


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def entry_message_ids(resp: Any, count: int, batched: bool) -> list[MessageId]:
    """The ids of the ``count`` messages of an entry from the produce response ``resp``
    (``-1:-1:<partition>:-1`` each for a duplicate, as Pulsar answers); raises UnknownError
    for a malformed response."""
    if not isinstance(resp, dict):
        raise exc.UnknownError(f"unexpected produce response: {resp!r}")
    topic = resp.get("topic")
    texts = resp.get("messageIds")
    ledger, entry = resp.get("ledgerId"), resp.get("entryId")
    partition = resp.get("partition", -1)
    if isinstance(texts, list) and len(texts) == count and not _positional(texts, resp, batched):
        return [MessageId.from_text(t, topic) for t in texts]
    if resp.get("duplicate"):
        ledger, entry, batched = -1, -1, False
    if not (isinstance(ledger, int) and isinstance(entry, int)):
        raise exc.UnknownError(f"unexpected produce response: {resp!r}")
    ids = []
    for i in range(count):
        mid = MessageId(partition, ledger, entry, i if batched else -1)
        mid._topic = topic
        ids.append(mid)
    return ids


def _positional(texts: list[Any], resp: dict, batched: bool) -> bool:
    """Whether ``texts`` are exactly the ids the entry's position gives (``l:e:p:i`` for
    batch index i, ``l:e:p:-1`` unbatched): then they are made from the position instead
    of parsing each text (a batch of 1,000 answers 1,000 of them). First and last checked."""
    ledger, entry, partition = resp.get("ledgerId"), resp.get("entryId"), resp.get("partition", -1)
    if resp.get("duplicate") or not all(type(v) is int for v in (ledger, entry, partition)):
        return False
    prefix = f"{ledger}:{entry}:{partition}:"
    last = len(texts) - 1 if batched else -1
    return texts[0] == f"{prefix}{0 if batched else -1}" and texts[-1] == f"{prefix}{last}"
