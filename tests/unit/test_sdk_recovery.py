"""A consumer recovers by itself when the service restarts or forgets it, closes promptly
without losing acks, and says what happened in the user's terms (issue 11, defect 5) — on
the engine over in-memory adapters."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time

import pytest

import magnetar as pulsar
from magnetar._consumer.acks import tracker as _acks
from magnetar_local.memory_service import MemoryService, sdk_threads
from magnetar_wire.names import TopicName

topic_name = TopicName.parse

SHARED = pulsar.ConsumerType.Shared
EARLIEST = pulsar.InitialPosition.Earliest
INTERNAL = "checking entry 0 of persistent/public/default/t|1 failed: EndpointConnectionError"


def produce(client, topic, payloads, **kw):
    producer = client.create_producer(topic, **kw)
    for p in payloads:
        producer.send(p)
    producer.close()


def cursor(svc, topic="persistent/public/default/t", subscription="s"):
    return svc.stores.cursors.get(svc.key_of(topic), subscription)


class Outage:
    """A TCP proxy in front of ``svc``: ``down()`` closes every connection and refuses new
    ones (the service is stopped, as far as clients can tell), ``up()`` serves again on the
    same port."""

    def __init__(self, svc: MemoryService) -> None:
        self._target = ("127.0.0.1", svc.gateway.port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._serve()

    def _serve(self) -> None:
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def down(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def up(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._serve()


# ------------------------------------------------------------------ re-subscribing


def test_a_consumer_whose_subscription_was_forgotten_subscribes_again_with_its_settings(
    svc, client
):
    consumer = client.subscribe("t", "s", consumer_type=SHARED, initial_position=EARLIEST,
                                consumer_name="worker")  # fmt: skip
    assert svc.wait_for(lambda s: s.recorded("receive"))
    svc.stores.cursors.delete(svc.key_of("persistent/public/default/t"), cursor(svc))
    produce(client, "t", [b"after"])  # wakes the long poll: SubscriptionNotFound
    msg = consumer.receive(5000)
    assert msg.data() == b"after"
    first, again = svc.recorded("subscribe")
    assert again.body == first.body  # the same name, type and initial position
    assert cursor(svc).consumers and consumer.is_connected()


def test_a_consumer_recovers_by_itself_after_a_restart_that_lost_its_subscription(svc):
    outage = Outage(svc)
    client = pulsar.Client(outage.url)
    consumer = client.subscribe("t", "s", initial_position=EARLIEST)
    produce(client, "t", [b"before"])
    consumer.acknowledge(consumer.receive(5000))
    consumer._core.ack_tracker.flush()
    outage.down()
    deadline = time.monotonic() + 5
    while consumer.is_connected() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not consumer.is_connected()
    svc.stores.cursors.delete(svc.key_of("persistent/public/default/t"), cursor(svc))
    outage.up()  # the service is back, without the subscription
    produce(client, "t", [b"after"])
    assert consumer.receive(15_000).data() == b"after"
    assert consumer.is_connected() and len(svc.recorded("subscribe")) == 2
    client.close()
    outage.down()


def test_acks_of_a_forgotten_consumer_reach_the_cursor_after_it_subscribes_again(svc, client):
    consumer = client.subscribe("t", "s", initial_position=EARLIEST, receiver_queue_size=1)
    produce(client, "t", [b"x", b"y"])
    msg = consumer.receive(5000)  # y fills the queue: no receive in flight to notice first
    assert svc.wait_for(lambda s: len(s.recorded("receive")) == 2)
    time.sleep(0.1)
    state = cursor(svc)
    state.consumers.clear()  # the service forgot the consumer (its lease ran out)
    svc.stores.cursors.put(svc.key_of("persistent/public/default/t"), state)
    consumer.acknowledge(msg)
    assert svc.wait_for(lambda s: cursor(s).mark_delete == 0)
    assert len(svc.recorded("subscribe")) == 2


def test_a_reader_that_was_forgotten_goes_on_after_the_last_message_it_read(svc, client):
    produce(client, "t", [b"0", b"1", b"2"])
    reader = client.create_reader("t", pulsar.MessageId.earliest, receiver_queue_size=1)
    assert reader.read_next(5000).data() == b"0"
    key = svc.key_of("persistent/public/default/t")
    for state in svc.stores.cursors.list(key):
        svc.stores.cursors.delete(key, state)
    produce(client, "t", [b"3"])
    assert [reader.read_next(5000).data() for _ in range(3)] == [b"1", b"2", b"3"]
    reader.close()


def delete_topic(svc, topic="persistent://public/default/t"):
    svc.engine.admin.delete_topic(topic_name(topic), partitioned=False, force=True)


def test_a_consumer_and_a_reader_go_on_in_a_topic_deleted_and_created_again(svc, client):
    produce(client, "t", [b"old-0", b"old-1"])
    consumer = client.subscribe("t", "s", initial_position=EARLIEST)
    reader = client.create_reader("t", pulsar.MessageId.earliest)
    for _ in range(2):
        consumer.acknowledge(consumer.receive(5000))
        reader.read_next(5000)
    consumer._core.ack_tracker.flush()
    delete_topic(svc)
    new = [b"new-%d" % i for i in range(30)]
    produce(client, "t", new)
    got = [consumer.receive(10_000) for _ in new]
    for msg in got:
        consumer.acknowledge(msg)
    assert [m.data() for m in got] == new  # in its first ledger's ids, none taken as acked
    assert [reader.read_next(10_000).data() for _ in new] == new  # from the new start
    assert got[0].message_id().ledger_id() > 1  # the topic's second ledger


def test_a_consumer_whose_topic_vanished_subscribes_again_creating_it(svc, client):
    consumer = client.subscribe("t", "s", initial_position=pulsar.InitialPosition.Latest)
    assert svc.wait_for(lambda s: s.recorded("receive"))
    delete_topic(svc)  # as a restart without its state: no topic, no subscription
    assert svc.wait_for(lambda s: len(s.recorded("subscribe")) == 2, timeout=10)
    produce(client, "t", [b"after"])  # after it subscribed again: at Latest, not skipped
    assert consumer.receive(5000).data() == b"after"


def test_a_reader_whose_old_registration_holds_its_cursor_takes_a_new_one_instead(svc, client):
    produce(client, "t", [b"0", b"1"])
    reader = client.create_reader("t", pulsar.MessageId.earliest, receiver_queue_size=1)
    assert reader.read_next(5000).data() == b"0"
    sub = reader._consumer._core.subs[0]
    with sub.lock:
        orphan, sub.consumer_id = sub.consumer_id, "forgotten"  # its registration lives on
    produce(client, "t", [b"2"])
    assert [reader.read_next(5000).data() for _ in range(2)] == [b"1", b"2"]
    names = [r.path.split("/")[-2] for r in svc.recorded("subscribe")]
    # the first name again (ConsumerBusy: its orphan holds it), once, then a new cursor
    assert names[:2] == [names[0]] * 2 and names[2:] == [sub.subscription] != names[:1]
    assert sub.consumer_id not in (orphan, "forgotten")
    reader.close()


# ------------------------------------------------------------------ closing


def test_close_takes_one_request_timeout_however_many_partitions_stall(svc):
    svc.create_partitioned_topic("persistent/public/default/p", 4)
    client = pulsar.Client(svc.url, operation_timeout_seconds=1)
    consumer = client.subscribe("p", "s", consumer_type=SHARED)
    svc.delay["close"] = 3.0
    start = time.monotonic()
    consumer.close()
    assert time.monotonic() - start < 1.5
    assert len(svc.recorded("close")) == 4  # every partition was asked at once
    client.close()


def test_close_aborts_a_stalled_redelivery_and_sends_the_acks_at_once(svc, monkeypatch):
    monkeypatch.setattr(_acks, "ACK_GROUP_TIME", 3600.0)
    client = pulsar.Client(svc.url, operation_timeout_seconds=2)
    consumer = client.subscribe("t", "s", initial_position=EARLIEST)
    produce(client, "t", [b"x"])
    msg = consumer.receive(5000)
    svc.delay["redeliver"] = 5.0  # the service is slow to answer the redelivery
    svc.fail_next("receive", 503, "ServiceUnitNotReady", INTERNAL)  # it may have served it
    assert svc.wait_for(lambda s: s.recorded("redeliver"), timeout=10)
    consumer.acknowledge(msg)
    start = time.monotonic()
    consumer.close()
    took = time.monotonic() - start
    svc.delay.clear()
    assert took < 1.0  # not the 2 s a poll thread's request in flight held it
    assert cursor(svc).mark_delete == 0
    client.close()


def test_close_sends_acks_grouped_a_moment_ago_before_it_returns(svc, client, monkeypatch):
    monkeypatch.setattr(_acks, "ACK_GROUP_TIME", 3600.0)
    consumer = client.subscribe("t", "s", initial_position=EARLIEST)
    produce(client, "t", [b"x"])
    consumer.acknowledge(consumer.receive(5000))
    consumer.close()
    assert cursor(svc).mark_delete == 0


def test_shutdown_sends_pending_acks_too(svc, monkeypatch):
    monkeypatch.setattr(_acks, "ACK_GROUP_TIME", 3600.0)
    before = sdk_threads()
    client = pulsar.Client(svc.url)
    consumer = client.subscribe("t", "s", initial_position=EARLIEST)
    produce(client, "t", [b"x"])
    consumer.acknowledge(consumer.receive(5000))
    client.shutdown()
    assert cursor(svc).mark_delete == 0
    assert sdk_threads() == before


# ------------------------------------------------------------------ logs in the user's terms


def test_receive_failures_are_logged_once_in_the_user_s_terms_and_the_recovery_too(
    svc, client, caplog
):
    for _ in range(3):
        svc.fail_next("receive", 503, "ServiceUnitNotReady", INTERNAL)
    with caplog.at_level(logging.DEBUG, logger="magnetar"):
        consumer = client.subscribe("t", "s", initial_position=EARLIEST)
        assert svc.wait_for(lambda s: len(s.recorded("receive")) >= 4, timeout=10)
        produce(client, "t", [b"x"])
        assert consumer.receive(10_000).data() == b"x"
    records = [r for r in caplog.records if r.name == "magnetar" and "receiv" in r.getMessage()]
    loud = [r.getMessage() for r in records if r.levelno >= logging.INFO]
    assert len(loud) == 2, loud
    assert "busy or its storage is unavailable" in loud[0] and "EndpointConnection" not in loud[0]
    assert "works again after 3 failed attempt(s)" in loud[1]
    assert any(INTERNAL in r.getMessage() for r in records if r.levelno == logging.DEBUG)


def test_a_stopped_service_is_reported_as_unreachable(svc, caplog):
    outage = Outage(svc)
    client = pulsar.Client(
        outage.url, operation_timeout_seconds=5
    )  # 1 s was too short for a subscribe in a loaded full run
    consumer = client.subscribe("t", "s")
    assert svc.wait_for(lambda s: s.recorded("receive"))
    with caplog.at_level(logging.WARNING, logger="magnetar"):
        outage.down()
        deadline = time.monotonic() + 5
        while consumer.is_connected() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not consumer.is_connected()
        with pytest.raises(pulsar.Timeout):
            consumer.receive(300)
        client.close()
    texts = [r.getMessage() for r in caplog.records if "receiving on" in r.getMessage()]
    assert texts and "the service cannot be reached (ConnectError)" in texts[0]
    assert not any("HTTPConnection" in t or "Errno" in t for t in texts)
