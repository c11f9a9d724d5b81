"""Consumer behaviour against the engine on in-memory adapters."""

from __future__ import annotations

import gc
import threading
import time

import pytest

import magnetar as pulsar
from magnetar._consumer import receiver as _receiver
from magnetar._consumer.acks import tracker as _acks
from magnetar_local.memory_service import sdk_threads, topic_name


def produce(client, topic, payloads, **kw):
    producer = client.create_producer(topic, **kw)
    for p in payloads:
        producer.send_async(p, lambda r, m: None)
    producer.flush()
    producer.close()


def test_receive_returns_messages_in_order_with_their_fields(client):
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t", producer_name="prod")
    producer.send(b"one", properties={"a": "1"}, partition_key="k", event_timestamp=77)
    producer.send(None)
    first, second = consumer.receive(5000), consumer.receive(5000)
    assert (first.data(), first.properties(), first.partition_key()) == (b"one", {"a": "1"}, "k")
    assert first.event_timestamp() == 77 and second.event_timestamp() == 0
    assert first.producer_name() == "prod" and first.redelivery_count() == 0
    assert (
        str(first.message_id()) == "1:0:-1:-1"
        and first.topic_name() == "persistent://public/default/t"
    )
    assert first.publish_timestamp() > 0 and first.value() == b"one"
    assert second.has_null_value() and second.data() == b"" and second.value() is None
    assert consumer.topic() == "persistent://public/default/t"
    assert consumer.subscription_name() == "s" and consumer.consumer_name()


def test_receive_raises_timeout_when_nothing_arrives(client):
    consumer = client.subscribe("t", "s")
    start = time.monotonic()
    with pytest.raises(pulsar.Timeout):
        consumer.receive(timeout_millis=200)
    assert 0.19 <= time.monotonic() - start < 2


def test_the_receive_request_asks_for_entries_and_the_free_queue_space(svc, client):
    consumer = client.subscribe("t", "s", receiver_queue_size=7)
    assert consumer.is_connected() and svc.wait_for(lambda s: s.recorded("receive"))
    body = svc.recorded("receive")[0].body
    assert body == {"maxMessages": 7, "waitMs": _receiver.RECEIVE_WAIT_MS, "format": "entry"}


def test_initial_position_earliest_sees_older_messages(client):
    produce(client, "t", [b"old"])
    latest = client.subscribe("t", "late")
    earliest = client.subscribe("t", "early", initial_position=pulsar.InitialPosition.Earliest)
    assert earliest.receive(5000).data() == b"old"
    with pytest.raises(pulsar.Timeout):
        latest.receive(100)


def test_batched_entries_yield_only_the_indexes_in_the_delivery_mask(svc, client):
    consumer = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared)
    produce(client, "t", [b"a", b"b", b"c"], batching_enabled=True)
    msgs = [consumer.receive(5000) for _ in range(3)]
    assert [str(m.message_id()) for m in msgs] == ["1:0:-1:0", "1:0:-1:1", "1:0:-1:2"]
    consumer.acknowledge(msgs[1])
    consumer.close()  # a and c go back for redelivery; b is masked out
    again = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared)
    got = [again.receive(5000) for _ in range(2)]
    assert [m.data() for m in got] == [b"a", b"c"]
    assert [m.redelivery_count() for m in got] == [1, 1]
    with pytest.raises(pulsar.Timeout):
        again.receive(100)


def test_acks_are_grouped_into_one_request_within_the_group_time(svc, client):
    consumer = client.subscribe("t", "s")
    produce(client, "t", [b"%d" % i for i in range(5)])
    msgs = [consumer.receive(5000) for _ in range(5)]
    with consumer._core.ack_tracker._cond:  # the 5 acks land in one group however slow
        first_ack = time.monotonic()  # this thread is on a loaded machine
        for m in msgs:
            consumer.acknowledge(m)
    assert svc.wait_for(lambda s: s.recorded("ack"))
    time.sleep(0.3)  # a window in which a second (wrong) ack request would show up
    acks = svc.recorded("ack")
    assert len(acks) == 1 and acks[0].at - first_ack >= _acks.ACK_GROUP_TIME * 0.9
    assert acks[0].body == {"messageIds": [str(m.message_id()) for m in msgs], "cumulative": False}


def test_a_group_is_sent_when_1000_acks_are_pending_and_the_rest_on_close(svc, client, monkeypatch):
    monkeypatch.setattr(_acks, "ACK_GROUP_TIME", 3600.0)
    consumer = client.subscribe("t", "s")
    for i in range(2500):
        consumer.acknowledge(pulsar.MessageId(-1, 1, i, -1))
    assert svc.wait_for(lambda s: len(s.recorded("ack")) == 2)
    consumer.close()
    sizes = [len(r.body["messageIds"]) for r in svc.recorded("ack")]
    assert sizes == [1000, 1000, 500]
    kinds = [r.kind for r in svc.requests if r.kind in ("ack", "close")]
    assert kinds == ["ack", "ack", "ack", "close"]  # acks flushed before the consumer closes


def test_negative_acks_go_to_the_service_at_once_with_what_is_left_of_the_delay(svc, client):
    consumer = client.subscribe("t", "s", negative_ack_redelivery_delay_ms=1500)
    produce(client, "t", [b"x", b"y"])
    x, y = consumer.receive(5000), consumer.receive(5000)
    nacked_at = time.monotonic()
    consumer.negative_acknowledge(x)
    consumer.negative_acknowledge(y.message_id())
    again = [consumer.receive(5000), consumer.receive(5000)]
    came = time.monotonic()
    nacks = svc.recorded("nack")
    # one request, or two when the sender took the first nack before the second came: each
    # carries the delay, less what its nacks waited in the client (none: the full delay)
    assert [i for n in nacks for i in n.body["messageIds"]] == ["1:0:-1:-1", "1:1:-1:-1"]
    waited_ms = (nacks[-1].at - nacked_at) * 1000
    assert all(1500 - waited_ms <= n.body["delayMs"] <= 1500 for n in nacks)
    counts = [n.body.get("redeliveryCounts") for n in nacks]  # only the Message carries its
    assert {k: v for c in counts if c for k, v in c.items()} == {"1:0:-1:-1": 0}  # count
    assert nacks[-1].at - nacked_at < 1.0  # sent with the ack group, not after the delay
    assert came - nacked_at >= 1.5  # the service held them for the delay
    assert [(m.data(), m.redelivery_count()) for m in again] == [(b"x", 1), (b"y", 1)]


def test_cumulative_ack_is_refused_client_side_on_shared_and_sent_on_exclusive(svc, client):
    shared = client.subscribe("t", "sh", consumer_type=pulsar.ConsumerType.Shared)
    with pytest.raises(pulsar.CumulativeAcknowledgementNotAllowedError):
        shared.acknowledge_cumulative(pulsar.MessageId(-1, 1, 0, -1))
    exclusive = client.subscribe("t", "ex")
    produce(client, "t", [b"a", b"b", b"c"])
    msgs = [exclusive.receive(5000) for _ in range(3)]
    exclusive.acknowledge_cumulative(msgs[1])
    exclusive.acknowledge_cumulative(msgs[0])  # lower: nothing more to send
    assert svc.wait_for(lambda s: s.recorded("ack"))
    exclusive.close()
    acks = [r.body for r in svc.recorded("ack")]
    assert acks == [{"messageIds": ["1:1:-1:-1"], "cumulative": True}]
    again = client.subscribe("t", "ex")
    assert again.receive(5000).data() == b"c"


def test_a_second_exclusive_consumer_gets_consumer_busy(client):
    first = client.subscribe("t", "s")
    with pytest.raises(pulsar.ConsumerBusy):
        client.subscribe("t", "s")
    first.close()
    client.subscribe("t", "s").close()


def test_message_listener_gets_messages_and_can_be_paused(client):
    got: list[bytes] = []
    cond = threading.Condition()

    def listener(consumer, msg):
        with cond:
            got.append(msg.data())
            cond.notify_all()
        consumer.acknowledge(msg)

    consumer = client.subscribe("t", "s", message_listener=listener)
    with pytest.raises(pulsar.InvalidConfiguration):
        consumer.receive(10)
    produce(client, "t", [b"1"])
    with cond:
        assert cond.wait_for(lambda: got == [b"1"], 5)
    consumer.pause_message_listener()
    produce(client, "t", [b"2"])
    with cond:
        assert not cond.wait_for(lambda: len(got) > 1, 0.3)
    consumer.resume_message_listener()
    with cond:
        assert cond.wait_for(lambda: got == [b"1", b"2"], 5)


def test_redeliver_unacknowledged_drops_the_local_queue_and_asks_the_service(svc, client):
    consumer = client.subscribe("t", "s")
    produce(client, "t", [b"a", b"b"], batching_enabled=True)  # one entry: arrives as a whole
    assert consumer.receive(5000).data() == b"a"
    consumer.redeliver_unacknowledged_messages()
    assert len(svc.recorded("redeliver")) == 1
    again = [consumer.receive(5000) for _ in range(2)]
    assert [(m.data(), m.redelivery_count()) for m in again] == [(b"a", 1), (b"b", 1)]


def test_close_returns_at_once_during_a_long_poll_and_leaves_no_threads(svc):
    before = sdk_threads()
    client = pulsar.Client(svc.url)
    consumer = client.subscribe("t", "s")
    assert svc.wait_for(lambda s: s.recorded("receive"))  # a long poll is in flight
    start = time.monotonic()
    consumer.close()
    assert time.monotonic() - start < 1.0 < _receiver.RECEIVE_WAIT_MS / 1000
    assert sdk_threads() == before
    assert len(svc.recorded("close")) == 1
    with pytest.raises(pulsar.AlreadyClosed):
        consumer.receive(10)
    client.close()


def test_a_dropped_consumer_stops_its_threads_and_unregisters(svc):
    before = sdk_threads()
    client = pulsar.Client(svc.url)
    consumer = client.subscribe("t", "s")
    assert svc.wait_for(lambda s: s.recorded("receive"))
    del consumer
    gc.collect()
    assert sdk_threads() == before and len(svc.recorded("close")) == 1
    client.subscribe("t", "s").close()  # the Exclusive subscription is free again
    client.close()
    assert sdk_threads() == before


def test_receive_blocked_forever_is_released_by_close(client):
    consumer = client.subscribe("t", "s")
    errors = []
    t = threading.Thread(
        target=lambda: errors.append(pytest.raises(pulsar.AlreadyClosed, consumer.receive))
    )
    t.start()
    deadline = time.monotonic() + 5
    while not consumer._core.cond._waiters and time.monotonic() < deadline:
        time.sleep(0.001)  # until receive() waits on the queue
    assert consumer._core.cond._waiters
    consumer.close()
    t.join(2)
    assert not t.is_alive() and len(errors) == 1


def test_unsubscribe_deletes_the_subscription_and_surfaces_consumer_busy(svc, client):
    a = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared)
    b = client.subscribe("t", "s", consumer_type=pulsar.ConsumerType.Shared)
    with pytest.raises(pulsar.ConsumerBusy):
        a.unsubscribe()
    b.close()
    a.unsubscribe()
    assert len(svc.recorded("unsubscribe")) == 2
    assert svc.engine.admin.subscriptions(topic_name("persistent/public/default/t")) == []
    assert not a.is_connected()


def test_a_partitioned_topic_is_consumed_from_every_partition_and_acked_per_partition(svc, client):
    svc.create_partitioned_topic("persistent/public/default/p", 2)
    consumer = client.subscribe("p", "s")
    produce(client, "p", [b"%d" % i for i in range(4)])
    msgs = [consumer.receive(5000) for _ in range(4)]
    assert sorted(m.data() for m in msgs) == [b"0", b"1", b"2", b"3"]
    assert {m.topic_name() for m in msgs} == {
        f"persistent://public/default/p-partition-{i}" for i in (0, 1)
    }
    for m in msgs:
        consumer.acknowledge(m)
    assert svc.wait_for(lambda s: len(s.recorded("ack")) == 2)
    paths = sorted(r.path for r in svc.recorded("ack"))
    assert "p-partition-0" in paths[0] and "p-partition-1" in paths[1]
    with pytest.raises(pulsar.OperationNotSupported):
        multi = client.subscribe(["a", "b"], "m")
        multi.acknowledge(pulsar.MessageId(-1, 1, 0, -1))


def test_an_unknown_consumer_id_makes_the_sdk_subscribe_again(svc, client):
    consumer = client.subscribe("t", "s", initial_position=pulsar.InitialPosition.Earliest)
    assert svc.wait_for(lambda s: s.recorded("receive"))
    first = svc.recorded("receive")[0].path
    key = svc.key_of("persistent/public/default/t")
    cursor = svc.stores.cursors.get(key, "s")
    cursor.consumers.clear()  # the service forgot the consumer (its lease expired)
    svc.stores.cursors.put(key, cursor)
    produce(client, "t", [b"later"])  # the long poll answers ConsumerNotFound
    assert svc.wait_for(lambda s: len(s.recorded("subscribe")) == 2)
    assert consumer.receive(5000).data() == b"later"
    new_id = svc.recorded("subscribe")[-1]  # later requests use the new consumer id
    assert new_id.path.endswith("/consumers")
    assert svc.wait_for(lambda s: s.recorded("receive")[-1].path != first)  # another id


def test_batch_receive_follows_the_policy(client):
    policy = pulsar.ConsumerBatchReceivePolicy(3, -1, 500)
    consumer = client.subscribe("t", "s", batch_receive_policy=policy)
    produce(client, "t", [b"%d" % i for i in range(5)])
    assert [m.data() for m in consumer.batch_receive()] == [b"0", b"1", b"2"]
    assert [m.data() for m in consumer.batch_receive()] == [b"3", b"4"]
    start = time.monotonic()
    assert consumer.batch_receive() == []
    assert time.monotonic() - start >= 0.49


def test_a_huge_receiver_queue_asks_for_at_most_the_contract_s_limit(svc, client):
    consumer = client.subscribe("t", "s", receiver_queue_size=50_000)
    assert consumer.is_connected() and svc.wait_for(lambda s: s.recorded("receive"))
    assert (
        svc.recorded("receive")[0].body["maxMessages"] == _receiver.MAX_RECEIVE_MESSAGES == 10_000
    )
