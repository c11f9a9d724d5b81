"""``Producer``: publishes messages to a topic (pulsar-client's API)."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from datetime import timedelta
from typing import Any

from . import exceptions as exc
from ._enums import HashingScheme, PartitionsRoutingMode, Result
from ._producer.growth import PartitionWatch
from ._producer.routing import Router, java_string_hash
from ._producer.sender import SenderCore
from ._validate import check_type, check_type_or_none
from .message import Message, MessageId

__all__ = ["Producer", "java_string_hash"]


class Producer:
    """Publishes to one topic (all partitions of a partitioned topic). Create with
    ``Client.create_producer``."""

    def __init__(
        self,
        core: SenderCore,
        topic: str,
        partitions: int,
        *,
        schema: Any,
        routing_mode: PartitionsRoutingMode,
        message_router: Any,
        log: logging.Logger,
        hashing_scheme: HashingScheme = HashingScheme.JavaStringHash,
        watch: PartitionWatch | None = None,
    ) -> None:
        self._core = core
        self._topic = topic
        self._partitions = partitions
        self._schema = schema
        self._router = None
        if partitions > 0:  # a partitioned topic, even of one partition: it may grow
            batched = core.batch_partition if core.cfg.batching else None
            self._router = Router(partitions, routing_mode, hashing_scheme, message_router,
                                  batched)  # fmt: skip
        self._log = log
        self._watch = watch if self._router is not None else None
        self._finalizer = weakref.finalize(self, core.close)

    def topic(self) -> str:
        """The full topic name."""
        return self._topic

    def producer_name(self) -> str:
        """The producer's name (given, or assigned by the service)."""
        return self._core.producer_name

    def last_sequence_id(self) -> int:
        """The highest sequence id the service has acknowledged; -1 before any publish. With
        deduplication on, it starts from the service's ``lastSequenceId`` for this name."""
        return self._core.last_sequence_id

    def is_connected(self) -> bool:
        """True until the producer is closed or fenced."""
        return not self._core.closed and self._finalizer.alive and self._core.fenced is None

    def send(self, content: Any, properties: dict | None = None, partition_key: str | None = None,
             ordering_key: str | None = None, sequence_id: int | None = None,
             replication_clusters: list | None = None, disable_replication: bool = False,
             event_timestamp: int | None = None, deliver_at: int | None = None,
             deliver_after: timedelta | None = None) -> MessageId:  # fmt: skip
        """Publish one message and wait until the service has stored it.

        Sends the open batch at once (as Pulsar's synchronous send does). ``content=None``
        sends a null value (a tombstone). Delayed messages (``deliver_at``/``deliver_after``)
        are never batched. A chunked message's id is a ``ChunkMessageId`` (the last chunk's).

        Raises:
            TypeError: ``content`` does not match the schema (not bytes for the default).
            ValueError: an argument of the wrong type, or a ``deliver_at`` (or ``deliver_after``
                from now) outside a Java long.
            PulsarException: the publish failed (``Timeout``, ``MessageTooBig`` (nothing is
                sent), ``ProducerFenced``, ``UnknownError`` when a ``message_router`` returns
                no valid partition index, ...).
        """
        done = threading.Event()
        outcome: list[Any] = []

        def complete(result: Result, msg_id: MessageId | None, error: Any) -> None:
            outcome[:] = [msg_id, error]
            done.set()

        fields, partition, batchable = self._build(
            content, properties, partition_key, ordering_key, sequence_id,
            replication_clusters, disable_replication, event_timestamp, deliver_at, deliver_after,
        )  # fmt: skip
        self._core.enqueue(fields, partition, batchable, complete)
        self._core.flush_batches()
        done.wait()
        msg_id, error = outcome
        if error is not None:
            raise error
        return msg_id

    def send_async(self, content: Any, callback: Any, properties: dict | None = None,
                   partition_key: str | None = None, ordering_key: str | None = None,
                   sequence_id: int | None = None, replication_clusters: list | None = None,
                   disable_replication: bool = False, event_timestamp: int | None = None,
                   deliver_at: int | None = None, deliver_after: timedelta | None = None) -> None:  # fmt: skip
        """Queue one message; ``callback(result, msg_id)`` runs when it is stored or failed
        (``Result.Ok`` on success), in send order. A full queue calls back with
        ``ProducerQueueIsFull`` unless ``block_if_queue_full`` (then it waits for room); a
        fenced producer calls back with ``ProducerFenced``, a batched message above the maximum
        size with ``MessageTooBig``; a message not stored within ``send_timeout_millis`` with
        ``Timeout``. ``callback=None`` (as pulsar-client allows) sends without a callback:
        a failure is then only logged."""
        if callback is None:
            callback = self._log_failure
        if not callable(callback):
            raise ValueError("Argument callback is expected to be of type 'function'")
        try:
            fields, partition, batchable = self._build(
                content, properties, partition_key, ordering_key, sequence_id,
                replication_clusters, disable_replication, event_timestamp, deliver_at,
                deliver_after,
            )  # fmt: skip
        except exc.UnknownError as e:  # a custom router's answer is not a partition index
            callback(e.result(), None)
            return

        def complete(result: Result, msg_id: MessageId | None, error: Any) -> None:
            callback(result, msg_id)

        try:
            self._core.enqueue(fields, partition, batchable, complete)
        except (exc.ProducerQueueIsFull, exc.ProducerFenced, exc.MessageTooBig) as e:
            callback(e.result(), None)

    def _log_failure(self, result: Result, msg_id: MessageId | None) -> None:
        """The callback of ``send_async(content, None)``: log what failed."""
        if result != Result.Ok:
            self._log.warning("send_async to %s failed without a callback: %s",
                              self._topic, result.name)  # fmt: skip

    def flush(self) -> None:
        """Send every queued message and wait until each is stored or failed."""
        if self._core.closed:
            raise exc.AlreadyClosed("the producer is closed")
        self._core.wait_for(self._core.flush_batches())

    def close(self) -> None:
        """Send what is queued, then close (later sends raise ``AlreadyClosed``)."""
        self._finalizer()
        self._core.closed = True

    # ------------------------------------------------------------------ helpers

    def _build(self, content: Any, properties: Any, partition_key: Any, ordering_key: Any,
               sequence_id: Any, replication_clusters: Any, disable_replication: Any,
               event_timestamp: Any, deliver_at: Any, deliver_after: Any,
               ) -> tuple[dict[str, Any], int, bool]:  # fmt: skip
        null = content is None
        data, schema_key = (b"", None) if null else self._encode(content)
        check_type(bytes, data, "data")
        check_type_or_none(dict, properties, "properties")
        check_type_or_none(str, partition_key, "partition_key")
        partition_key = schema_key if schema_key is not None else partition_key
        check_type_or_none(str, ordering_key, "ordering_key")
        check_type_or_none(int, sequence_id, "sequence_id")
        check_type_or_none(list, replication_clusters, "replication_clusters")
        check_type(bool, disable_replication, "disable_replication")
        check_type_or_none(int, event_timestamp, "event_timestamp")
        check_type_or_none(int, deliver_at, "deliver_at")
        check_type_or_none(timedelta, deliver_after, "deliver_after")
        for k, v in (properties or {}).items():
            check_type(str, k, "properties key")
            check_type(str, v, "properties value")
        now = int(time.time() * 1000)
        deliver_ms = deliver_at or 0
        if deliver_after:
            deliver_ms = now + int(deliver_after.total_seconds() * 1000)
        if not -(2**63) <= deliver_ms < 2**63:
            raise ValueError(
                f"Argument deliver_at must be epoch milliseconds within a Java long, not {deliver_ms}"
            )
        fields: dict[str, Any] = {"payload": data, "publish_time_ms": now, "null_value": null}
        if sequence_id:
            fields["sequence_id"] = sequence_id
        if properties:
            fields["properties"] = dict(properties)
        if partition_key:
            fields["key"] = partition_key
        if ordering_key:
            fields["ordering_key"] = ordering_key.encode("utf-8")
        if event_timestamp:
            fields["event_time_ms"] = event_timestamp
        if deliver_ms:
            fields["deliver_at_ms"] = deliver_ms
        if self._core.reg.schema_version is not None:  # the registry's version of the schema
            fields["schema_version"] = self._core.reg.schema_version
        partition = self._route(data, properties, partition_key, ordering_key)
        return fields, partition, not deliver_ms

    def _encode(self, content: Any) -> tuple[bytes, str | None]:
        """The payload and the message key the schema sets (a SEPARATED key/value schema
        puts its key there), else ``None``. Raises what the schema's encoder raises."""
        encode_message = getattr(self._schema, "_encode_message", None)
        if encode_message is not None:
            data, key = encode_message(content)
            return data, key
        return self._schema.encode(content), None

    def _route(self, data: bytes, properties: Any, key: Any, ordering_key: Any) -> int:
        """The partition of a message: -1 on a non-partitioned topic (see ``_routing``)."""
        if self._router is None:
            return -1 if self._partitions == 0 else 0
        if self._watch is not None:
            grown = self._watch.refresh()  # the topic's partition count, once per interval
            if grown:
                self._core.add_partitions(grown)
                self._partitions = self._router.partitions = self._watch.partitions

        def message() -> Message:
            return Message(data, MessageId(), topic=self._topic, properties=properties,
                           partition_key=key, ordering_key=(ordering_key or "").encode(),
                           schema=self._schema)  # fmt: skip

        return self._router.choose(key, message)
