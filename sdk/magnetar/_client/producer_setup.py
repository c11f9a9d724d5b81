"""``Client.create_producer`` behind the public signature: its arguments checked, the
producer registered on every partition (``magnetar._producer.registration``) and its sender configured."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from magnetar import exceptions as exc
from magnetar._encryption.key_reader import CryptoKeyReader, entry_encrypter
from magnetar._enums import (
    BatchingType,
    CompressionType,
    HashingScheme,
    PartitionsRoutingMode,
    ProducerAccessMode,
)
from magnetar._producer.batches import BatchLimits
from magnetar._producer.growth import PartitionWatch
from magnetar._producer.registration import Lease, declared_schema, register_all
from magnetar._producer.sender import SenderConfig, SenderCore
from magnetar._topics import parse_topic
from magnetar._validate import check_type, check_type_or_none
from magnetar.producer import Producer
from magnetar.schema import BytesSchema, Schema
from magnetar_wire import Codec

if TYPE_CHECKING:
    import threading
    import weakref

    from magnetar._consumer.client_view import ClientView

    class ProducerHost(ClientView, Protocol):
        """What ``open_producer`` needs of the ``Client`` besides ``ClientView``."""

        _producers: weakref.WeakSet[SenderCore]
        _stopping: threading.Event  # ends a WaitForExclusive create on close
        _partitions_update_interval_s: float


__all__ = ["open_producer", "validate_producer"]


def validate_producer(a: dict[str, Any]) -> None:
    """Check the arguments of ``create_producer`` (given as a dict); raises ValueError for
    wrong types or batching together with chunking, or encryption keys without a
    ``crypto_key_reader`` (a reader alone does not encrypt, as in pulsar-client)."""
    check_type(str, a["topic"], "topic")
    check_type_or_none(str, a["producer_name"], "producer_name")
    check_type(Schema, a["schema"], "schema")
    check_type_or_none(int, a["initial_sequence_id"], "initial_sequence_id")
    for name in ("send_timeout_millis", "max_pending_messages",
                 "max_pending_messages_across_partitions", "batching_max_messages",
                 "batching_max_allowed_size_in_bytes", "batching_max_publish_delay_ms"):  # fmt: skip
        check_type(int, a[name], name)
    check_type(CompressionType, a["compression_type"], "compression_type")
    for name in ("block_if_queue_full", "batching_enabled", "chunking_enabled",
                 "lazy_start_partitioned_producers"):  # fmt: skip
        check_type(bool, a[name], name)
    check_type(PartitionsRoutingMode, a["message_routing_mode"], "message_routing_mode")
    check_type_or_none(dict, a["properties"], "properties")
    check_type(BatchingType, a["batching_type"], "batching_type")
    check_type_or_none(str, a["encryption_key"], "encryption_key")
    check_type(ProducerAccessMode, a["access_mode"], "access_mode")
    check_type(HashingScheme, a["hashing_scheme"], "hashing_scheme")
    if a["message_router"] is not None and not callable(a["message_router"]):
        raise ValueError("Argument message_router is expected to be a function")
    if a["batching_enabled"] and a["chunking_enabled"]:
        raise ValueError("Batching and chunking of messages can't be enabled together.")
    check_type_or_none(CryptoKeyReader, a["crypto_key_reader"], "crypto_key_reader")
    check_type_or_none(list, a["encryption_keys"], "encryption_keys")
    for name in a["encryption_keys"] or []:
        check_type(str, name, "encryption_keys")
    if encryption_key_names(a) and a["crypto_key_reader"] is None:
        raise ValueError(
            "encryption_key / encryption_keys need a crypto_key_reader to read the public keys"
        )


def encryption_key_names(a: dict[str, Any]) -> list[str]:
    """The key names a producer encrypts for: ``encryption_key`` then ``encryption_keys``
    (each once, in order); empty: no encryption."""
    names = ([a["encryption_key"]] if a["encryption_key"] else []) + list(
        a["encryption_keys"] or []
    )
    return list(dict.fromkeys(names))


def open_producer(client: ProducerHost, a: dict[str, Any]) -> Producer:
    """A producer for ``client.create_producer``'s arguments ``a`` (see there for what it
    raises)."""
    a = {**a, "schema": a["schema"] if a["schema"] is not None else BytesSchema()}
    validate_producer(a)
    names = encryption_key_names(a)
    encrypt = entry_encrypter(a["crypto_key_reader"], names) if names else None
    topic_name = parse_topic(a["topic"])
    n = client._partitions(topic_name)
    targets = [topic_name.partition(i) for i in range(n)] if n else [topic_name]
    routing_mode = a["message_routing_mode"]
    if a["message_router"] is not None:
        routing_mode = PartitionsRoutingMode.CustomPartition
    elif routing_mode == PartitionsRoutingMode.CustomPartition and n:
        raise exc.InvalidConfiguration("CustomPartition routing needs a message_router")
    reg = register_all(client._t, [f"/v1/{t.path()}" for t in targets], a["producer_name"],
                       a["access_mode"].name, client._stopping, client._log,
                       declared_schema(a["schema"]))  # fmt: skip
    initial = a["initial_sequence_id"] if a["initial_sequence_id"] is not None else -1
    last = max(initial, reg.last_sequence_id)
    limits = BatchLimits(a["batching_max_messages"], a["batching_max_allowed_size_in_bytes"],
                         max(a["batching_max_publish_delay_ms"], 0) / 1000,
                         reg.max_message_size)  # fmt: skip
    send_timeout = a["send_timeout_millis"]
    cfg = SenderConfig(
        registration=reg, codec=Codec(int(a["compression_type"])),
        send_timeout=send_timeout / 1000 if send_timeout > 0 else None,
        max_pending=a["max_pending_messages"], block_if_full=a["block_if_queue_full"],
        batching=a["batching_enabled"], limits=limits,
        key_based=a["batching_type"] == BatchingType.KeyBased, chunking=a["chunking_enabled"],
        exclusive=a["access_mode"] != ProducerAccessMode.Shared,
        next_sequence_id=last + 1, last_sequence_id=last, encrypt=encrypt,
        reregister=partial(register_all, client._t, access_mode=a["access_mode"].name,
                           stop=client._stopping, log=client._log,
                           schema=declared_schema(a["schema"])),
    )  # fmt: skip
    core = SenderCore(client._t, cfg, client._log)
    client._producers.add(core)

    def grow(old: int, new: int) -> list[Lease]:
        bases = [f"/v1/{topic_name.partition(i).path()}" for i in range(old, new)]
        return register_all(client._t, bases, core.producer_name, a["access_mode"].name,
                            client._stopping, client._log,
                            declared_schema(a["schema"])).leases  # fmt: skip

    watch = PartitionWatch(n, lambda: client._partitions(topic_name), grow,
                           client._partitions_update_interval_s)  # fmt: skip
    return Producer(core, str(topic_name), n, schema=a["schema"], routing_mode=routing_mode,
                    message_router=a["message_router"], log=client._log,
                    hashing_scheme=a["hashing_scheme"], watch=watch)  # fmt: skip
