"""Entries as the data paths see them: checking one's header and metadata
(``validated_metadata``) and making its index item (``index_entry``), where a publish
committed one (``PublishResult``), and one handed to a consumer (``DeliveredEntry``). Shared
by persistent and non-persistent topics."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from magnetar_core.domain.errors import ChecksumError, InvalidMessage, NotAllowedError
from magnetar_core.domain.keyshared import sticky_key_hash
from magnetar_core.domain.log import IndexEntry
from magnetar_core.ports import EntryStore
from magnetar_wire import (
    ChecksumMismatch,
    DecodedEntry,
    EntryFormatError,
    EntryMessage,
    EntryMetadata,
    decode_entry,
    read_metadata,
    stored_payload,
)
from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class PublishResult:
    """Where an entry was committed and the ids of its messages (duplicates: -1:-1)."""

    topic: TopicName
    ledger_id: int
    entry_id: int
    partition: int
    message_ids: tuple[str, ...]
    duplicate: bool = False


@dataclass(frozen=True)
class DeliveredEntry:
    """An entry handed to a consumer, with its bytes exactly as produced."""

    topic: TopicName
    ledger_id: int
    entry_id: int
    partition: int
    redelivery_count: int
    batch_indexes: tuple[int, ...] | None
    data: bytes | None
    url: str | None = None
    url_range: tuple[int, int] | None = None
    """With ``url``: ``(offset, length)`` of the entry in the object (segments hold many)."""


def delivered_messages(
    delivered: Iterable[DeliveredEntry],
) -> Iterator[tuple[DeliveredEntry, DecodedEntry, int, EntryMessage]]:
    """Each message of entries delivered inline, batch masks applied: ``(delivered entry,
    its decoded entry, batch index or -1 when the entry is no batch, message)``; an
    end-to-end encrypted entry is ONE message (``opaque_entry``), as a pulsar-client
    consumer with ``ConsumerCryptoFailureAction.CONSUME`` sees it: the service has no key.
    Raises ValueError for an entry delivered by reference (no data: ask with
    by_reference=False)."""
    for d in delivered:
        if d.data is None:
            raise ValueError(f"entry {d.ledger_id}:{d.entry_id} was delivered by reference")
        meta = read_metadata(d.data)
        if meta.encryption is not None:
            opaque = opaque_entry(d.data, meta)
            yield d, opaque, -1, opaque.messages[0]
            continue
        entry = decode_entry(d.data)
        wanted = set(d.batch_indexes) if d.batch_indexes is not None else None
        for index, m in enumerate(entry.messages):
            if wanted is None or index in wanted:
                yield d, entry, index if entry.header.batched else -1, m


def opaque_entry(data: bytes, meta: EntryMetadata) -> DecodedEntry:
    """An encrypted entry as one message: the stored (compressed, encrypted) payload
    section with its first message's metadata (keys, properties, times stay in clear);
    ``encryption`` set. Its id takes batch index -1, which acknowledges the whole entry."""
    first = meta.messages[0]
    message = EntryMessage(
        payload=stored_payload(data), sequence_id=first.sequence_id,
        publish_time_ms=first.publish_time_ms, key=first.key, ordering_key=first.ordering_key,
        properties=first.properties, event_time_ms=first.event_time_ms,
        deliver_at_ms=first.deliver_at_ms, schema_version=first.schema_version,
    )  # fmt: skip
    return DecodedEntry(meta.header, meta.producer_name, (message,), meta.encryption)


_JAVA_LONG = range(-(2**63), 2**63)
_LONG_FIELDS = (
    ("sequenceId", "sequence_id"), ("publishTime", "publish_time_ms"),
    ("eventTime", "event_time_ms"), ("deliverAt", "deliver_at_ms"),
)  # fmt: skip


def validated_metadata(entry: bytes) -> EntryMetadata:
    """The entry's header and metadata, CRC checked, every id and time within a Java long
    (as the JSON edge bounds them); raises ChecksumError, InvalidMessage."""
    try:
        meta = read_metadata(entry)
    except ChecksumMismatch as exc:
        raise ChecksumError(f"Entry checksum mismatch: {exc}") from exc
    except EntryFormatError as exc:
        raise InvalidMessage(f"Not a valid entry: {exc}") from exc
    for i, message in enumerate(meta.messages):
        for name, attribute in _LONG_FIELDS:
            if getattr(message, attribute) not in _JAVA_LONG:
                raise InvalidMessage(
                    f"Not a valid entry: message {i}'s {name} must be within a Java long "
                    f"({_JAVA_LONG.start} to {_JAVA_LONG.stop - 1})"
                )
    return meta


def index_entry(meta: EntryMetadata, object_key: str, size: int) -> IndexEntry:
    """The index item of an entry of ``size`` bytes stored under ``object_key`` (entry id
    -1: the commit sets it), from its validated metadata."""
    times = [m.publish_time_ms for m in meta.messages]
    seqs = [m.sequence_id for m in meta.messages]
    return IndexEntry(
        entry_id=-1,
        object_key=object_key,
        offset=0,
        length=size,
        count=meta.header.count,
        batched=meta.header.batched,
        publish_min_ms=min(times),
        publish_max_ms=max(times),
        producer=meta.producer_name,
        sequence_min=min(seqs),
        sequence_max=max(seqs),
        partial_chunk=any(
            m.chunk is not None and m.chunk.chunk_id < m.chunk.total_chunks - 1
            for m in meta.messages
        ),
        key_hashes=tuple(sticky_key_hash(m.key, m.ordering_key) for m in meta.messages),
        deliver_at_ms=max(m.deliver_at_ms for m in meta.messages),
    )


def entry_bytes(entries: EntryStore, item: IndexEntry) -> bytes:
    """The bytes of a committed entry, whichever way it is stored: an inline entry's from its
    index item (no request), any other's from its object (one ranged GET). Every reader
    goes through here. Raises what ``entries.get`` raises for a missing object."""
    if item.data is not None:
        return item.data
    return entries.get(item.object_key, item.offset, item.length)


def check_delivery_delay(index: IndexEntry, now_ms: int, max_delay_ms: int) -> None:
    """Refuse an entry delayed beyond the namespace's ``maxDeliveryDelayInMillis`` (0: no
    limit), as Pulsar's broker does; raises NotAllowedError."""
    if max_delay_ms > 0 and index.deliver_at_ms - now_ms > max_delay_ms:
        raise NotAllowedError(
            f"Message delay of {index.deliver_at_ms - now_ms} ms exceeds the namespace's "
            f"maxDeliveryDelayInMillis of {max_delay_ms} ms"
        )
