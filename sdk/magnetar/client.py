"""``Client``: the entry point, as in pulsar-client (``import magnetar as pulsar``)."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from . import exceptions as exc
from ._client.options import client_settings
from ._consumer.receiver import ConsumerCore
from ._encryption.key_reader import CryptoKeyReader
from ._enums import (
    BatchingType,
    CompressionType,
    ConsumerCryptoFailureAction,
    ConsumerType,
    HashingScheme,
    InitialPosition,
    PartitionsRoutingMode,  # fmt: skip
    ProducerAccessMode,
    RegexSubscriptionMode,
)
from ._policies import (
    ConsumerBatchReceivePolicy,
    ConsumerDeadLetterPolicy,
    ConsumerKeySharedPolicy,
    MultiplierRedeliveryBackoff,
)
from ._producer.growth import PARTITIONS_UPDATE_INTERVAL_S
from ._producer.sender import SenderCore
from ._topics import TopicName, parse_topic
from ._transport.http import Transport
from ._transport.service_info import ServiceInfo, ServiceInfoProvider
from ._validate import check_type, check_type_or_none
from .authentication import Authentication
from .consumer import Consumer
from .message_id import MessageId
from .producer import Producer
from .reader import Reader
from .schema import BytesSchema, Schema
from .table_view import TableView

__all__ = ["Client"]


class Client:
    """Connects to a Magnetar service. Nothing is contacted until the first create /
    subscribe; producers and consumers keep working if this object is dropped."""

    def __init__(self, service_url: str | ServiceInfoProvider,
                 authentication: Authentication | None = None,
                 operation_timeout_seconds: int = 30, io_threads: int = 1,
                 message_listener_threads: int = 1, concurrent_lookup_requests: int = 50000,
                 log_conf_file_path: str | None = None, stats_interval_in_seconds: int = 600,
                 use_tls: bool = False, tls_trust_certs_file_path: str | None = None,
                 tls_allow_insecure_connection: bool = False, tls_validate_hostname: bool = False,
                 logger: Any = None, connection_timeout_ms: int = 10000,
                 listener_name: str | None = None, tls_private_key_file_path: str | None = None,
                 tls_certificate_file_path: str | None = None,
                 memory_limit_bytes: int = 64 * 1024 * 1024) -> None:  # fmt: skip
        """pulsar-client 3.13's arguments, in its order, with its type checks; what each
        becomes over HTTP(S) is in ``magnetar._client.options`` (several are documented
        no-ops, listed in docs/guide/sdk.md, "pulsar-client options"). Timeouts: seconds
        (``operation_timeout_seconds``) and ms (``connection_timeout_ms``). ``service_url``
        is the Magnetar API's HTTP(S) URL or a ``ServiceInfoProvider`` (``AutoClusterFailover``)
        that names the deployment and switches it (``magnetar._transport.failover``), closed with it.

        Raises:
            ValueError: a wrong type (``Argument X is expected to be of type ...``), a
                ``pulsar://`` or non-http(s) URL, ``use_tls`` with an ``http://`` URL, a
                logger that is not a ``logging.Logger``, ``ConsoleLogger`` or ``FileLogger``.
            OperationNotSupported: authentication plugins and ``AuthenticationTLS``.
        """
        settings = client_settings(locals())
        self._log = settings.logger
        self._t = Transport(settings.url, authentication=settings.authentication,
                            operation_timeout=settings.operation_timeout_s,
                            connect_timeout=settings.connect_timeout_s, verify=settings.verify,
                            cert=settings.cert, logger=self._log)  # fmt: skip
        self._follower = settings.follower
        self._follower.follow(self._t, settings.provider)
        self._producers: weakref.WeakSet[SenderCore] = weakref.WeakSet()
        self._consumers: weakref.WeakSet[ConsumerCore] = weakref.WeakSet()
        self._closed = False
        self._listener_name = listener_name
        self._stopping = threading.Event()  # ends a WaitForExclusive create on close
        self._partitions_update_interval_s = PARTITIONS_UPDATE_INTERVAL_S
        """How often partitioned producers look for new partitions (``_growth``)."""

    # ------------------------------------------------------------------ topics

    def _check_open(self) -> None:
        if self._closed:
            raise exc.AlreadyClosed("the client is closed")

    def _check_listener(self) -> None:
        """A lookup through a named listener fails, as Pulsar's for a listener the service
        does not advertise: Magnetar serves one HTTP(S) endpoint and advertises none."""
        if self._listener_name:
            raise exc.ServiceUnitNotReady(
                f"the service advertises no listener named {self._listener_name!r}: Magnetar "
                "has one HTTP(S) endpoint, the service URL; leave listener_name unset"
            )

    def _partitions(self, name: TopicName) -> int:
        if name.partition_index >= 0:
            return 0
        try:
            resp = self._t.call("GET", f"/admin/v2/{name.path()}/partitions")
        except exc.TopicNotFound:
            return 0
        n = resp.get("partitions", 0) if isinstance(resp, dict) else resp
        return n if isinstance(n, int) and n > 0 else 0

    def get_service_info(self) -> ServiceInfo:
        """The deployment the client uses now (the C++ client's ``getServiceInfo``)."""
        return self._follower.current

    def get_topic_partitions(self, topic: str) -> list[str]:
        """The partition names of ``topic``, or ``[topic]`` when it is not partitioned."""
        self._check_open()
        check_type(str, topic, "topic")
        name = parse_topic(topic)
        n = self._partitions(name)
        return [str(name.partition(i)) for i in range(n)] if n else [str(name)]

    # ------------------------------------------------------------------ producer

    def create_producer(self, topic: str, producer_name: str | None = None,
                        schema: Schema | None = None, initial_sequence_id: int | None = None,
                        send_timeout_millis: int = 30000,
                        compression_type: CompressionType = CompressionType.NONE,
                        max_pending_messages: int = 1000,
                        max_pending_messages_across_partitions: int = 50000,
                        block_if_queue_full: bool = False, batching_enabled: bool = False,
                        batching_max_messages: int = 1000,
                        batching_max_allowed_size_in_bytes: int = 128 * 1024,
                        batching_max_publish_delay_ms: int = 10, chunking_enabled: bool = False,
                        message_routing_mode: PartitionsRoutingMode = PartitionsRoutingMode.RoundRobinDistribution,
                        lazy_start_partitioned_producers: bool = False,
                        properties: dict | None = None,
                        batching_type: BatchingType = BatchingType.Default,
                        encryption_key: str | None = None,
                        crypto_key_reader: CryptoKeyReader | None = None,
                        access_mode: ProducerAccessMode = ProducerAccessMode.Shared,
                        message_router: Any = None,
                        hashing_scheme: HashingScheme = HashingScheme.JavaStringHash,
                        encryption_keys: list[str] | None = None) -> Producer:  # fmt: skip
        """Create a producer on ``topic`` (see PULSAR_API.md for every argument).

        Raises:
            ValueError: wrong argument types, or batching together with chunking.
            InvalidTopicName: a malformed topic name.
            ProducerFenced: an exclusive producer holds the topic (Shared, Exclusive).
            CryptoError: a public key file of ``crypto_key_reader`` cannot be read.

        Registers the producer (``POST .../producers``, per partition); ``WaitForExclusive``
        blocks until the topic is free. ``hashing_scheme`` (a Magnetar extra) picks how keyed
        messages hash to partitions (``JavaStringHash`` by default, or ``Murmur3_32Hash``);
        routing is described in ``magnetar._producer.routing``. ``encryption_key`` (pulsar-client's)
        and ``encryption_keys`` (several names, as the Java client's ``addEncryptionKey``)
        encrypt every entry end to end with the public keys of ``crypto_key_reader``.
        """
        self._check_open()
        self._check_listener()
        from ._client.producer_setup import open_producer

        return open_producer(self, locals())

    # ------------------------------------------------------------------ consumer

    def subscribe(self, topic: Any, subscription_name: str,
                  consumer_type: ConsumerType = ConsumerType.Exclusive,
                  schema: Schema | None = None, message_listener: Any = None,
                  receiver_queue_size: int = 1000,
                  max_total_receiver_queue_size_across_partitions: int = 50000,
                  consumer_name: str | None = None, unacked_messages_timeout_ms: int | None = None,
                  broker_consumer_stats_cache_time_ms: int = 30000,
                  negative_ack_redelivery_delay_ms: int = 60000, is_read_compacted: bool = False,
                  properties: dict | None = None, pattern_auto_discovery_period: int = 60,
                  initial_position: InitialPosition = InitialPosition.Latest,
                  crypto_key_reader: CryptoKeyReader | None = None,
                  replicate_subscription_state_enabled: bool = False,
                  max_pending_chunked_message: int = 10,
                  auto_ack_oldest_chunked_message_on_queue_full: bool = False,
                  start_message_id_inclusive: bool = False,
                  batch_receive_policy: ConsumerBatchReceivePolicy | None = None,
                  key_shared_policy: ConsumerKeySharedPolicy | None = None,
                  batch_index_ack_enabled: bool = False,
                  regex_subscription_mode: RegexSubscriptionMode = RegexSubscriptionMode.PersistentOnly,
                  dead_letter_policy: ConsumerDeadLetterPolicy | None = None,
                  crypto_failure_action: ConsumerCryptoFailureAction = ConsumerCryptoFailureAction.FAIL,
                  negative_ack_redelivery_backoff: MultiplierRedeliveryBackoff | None = None,
                  ack_timeout_redelivery_backoff: MultiplierRedeliveryBackoff | None = None,
                  tick_duration_ms: int = 1000, enable_retry: bool = False) -> Consumer:  # fmt: skip
        """Subscribe to ``topic`` and return a consumer.

        ``topic`` is a name, a list of names, or a compiled regex over one namespace
        (``re.compile("persistent://public/default/finance-.*")``), re-listed every
        ``pattern_auto_discovery_period`` seconds to pick up new topics (see
        ``magnetar._consumer.multitopic``). A partitioned topic is consumed on all its partitions.

        Redelivery (times in ms): ``negative_acknowledge`` sends the message back after
        ``negative_ack_redelivery_delay_ms``, or after ``negative_ack_redelivery_backoff``'s
        delay for its redelivery count (``MultiplierRedeliveryBackoff``, as the Java
        client); the service holds it for the delay. With ``unacked_messages_timeout_ms``
        (>= 10000; None / 0: off) a message not acknowledged in time is sent back, checked
        every ``tick_duration_ms`` (C++ client's name), after the optional
        ``ack_timeout_redelivery_backoff`` (see ``magnetar._consumer.acks``). ``dead_letter_policy``
        has the service publish a message delivered ``max_redeliver_count + 1`` times to the
        dead-letter topic. ``enable_retry`` subscribes to the retry letter topic too and
        allows ``Consumer.reconsume_later`` (see ``magnetar._consumer.retry``).

        Raises:
            ValueError: wrong argument types; ``unacked_messages_timeout_ms`` below 10000;
                ``tick_duration_ms`` below 100.
            InvalidTopicName: a malformed topic name or pattern.
            ConsumerBusy: a second consumer on an Exclusive subscription.
            NotAllowedError: a non-persistent topic (named; a regex skips them).
            NotAllowedError: ``is_read_compacted`` on a Shared or Key_Shared subscription.
            OperationNotSupported: ``enable_retry`` with a regex.
        """
        self._check_open()
        self._check_listener()
        from ._client.subscribe import open_consumer

        return open_consumer(self, locals())

    def create_reader(self, topic: str, start_message_id: MessageId,
                      schema: Schema | None = None, reader_listener: Any = None,
                      receiver_queue_size: int = 1000, reader_name: str | None = None,
                      subscription_role_prefix: str | None = None, is_read_compacted: bool = False,
                      crypto_key_reader: CryptoKeyReader | None = None,
                      start_message_id_inclusive: bool = False,
                      crypto_failure_action: ConsumerCryptoFailureAction = ConsumerCryptoFailureAction.FAIL,
                      ) -> Reader:  # fmt: skip
        """A reader of ``topic`` from ``start_message_id`` (after it unless
        ``start_message_id_inclusive``; ``MessageId.earliest`` / ``MessageId.latest``; at
        ``latest`` with ``start_message_id_inclusive`` it starts at the last message).

        Arguments in pulsar-client 3.13's order. A reader uses a non-durable cursor: it
        holds no data back and disappears on close. With ``is_read_compacted`` it reads the
        topic's compacted view (the latest message per key) up to the compaction horizon,
        then the live log. ``schema`` decodes ``Message.value()``. ``crypto_key_reader``
        decrypts end-to-end encrypted messages; ``crypto_failure_action`` says what to do
        with one it cannot decrypt (``magnetar._consumer.encrypted``). ``subscription_role_prefix`` is
        a type-checked no-op (a reader's subscription name is generated).
        Raises ValueError (argument types), InvalidTopicName, CryptoError (a key reader
        without the ``cryptography`` package).
        """
        self._check_open()
        self._check_listener()
        from ._client.reader_setup import open_reader

        return open_reader(self, locals())

    def create_table_view(self, topic: str, subscription_name: str | None = None,
                          schema: Schema | None = None) -> TableView:  # fmt: skip
        """A ``TableView``: the latest value of each key of ``topic``, kept up to date (read
        from the compacted view, then the live log; see ``magnetar.table_view``). Returns
        once the messages published before are applied. ``subscription_name``: the readers'
        cursor (random when None); ``schema`` (``BytesSchema()`` when None) decodes values.
        Raises ValueError (argument types), InvalidTopicName, ConsumerBusy (name taken).
        """
        self._check_open()
        self._check_listener()
        check_type(str, topic, "topic")
        check_type_or_none(str, subscription_name, "subscription_name")
        check_type_or_none(Schema, schema, "schema")
        return TableView(self, topic, subscription_name,
                         schema if schema is not None else BytesSchema())  # fmt: skip

    def _bytes_schema(self) -> Schema:
        return BytesSchema()

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close every producer (sending what is queued) and consumer; later use raises
        ``AlreadyClosed``."""
        self._close(abort=False)

    def shutdown(self) -> None:
        """Close at once: queued messages fail; pending acks are still sent (within the
        operation timeout: an acknowledgement the application made must not be lost)."""
        self._close(abort=True)

    def _close(self, *, abort: bool) -> None:
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        for core in list(self._producers):
            (core.abort if abort else core.close)()
        for consumer in list(self._consumers):
            consumer.close()
        self._t.close()
