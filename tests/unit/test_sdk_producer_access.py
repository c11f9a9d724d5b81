"""Producer registration against the engine on in-memory adapters: names, epochs, lastSequenceId and
deduplication, the four access modes, heartbeats, fencing, partitions."""

from __future__ import annotations

import threading

import pytest

import magnetar as pulsar
from magnetar_local.memory_service import sdk_threads, topic_name

AM = pulsar.ProducerAccessMode
TOPIC = "persistent/public/default/t"


def test_create_producer_registers_and_uses_the_assigned_name_and_epoch(svc, client):
    producer = client.create_producer("t")
    [reg] = svc.recorded("register")
    assert reg.path == f"/v1/{TOPIC}/producers" and reg.body == {"accessMode": "Shared"}
    name = producer.producer_name()
    assert name.startswith("magnetar-")  # assigned by the service
    producer.send(b"x")
    [post] = svc.recorded("produce")
    assert post.query == {"epoch": "0"} and post.body.producer_name == name


def test_a_given_name_is_registered_and_kept(svc, client):
    producer = client.create_producer("t", producer_name="mine")
    assert svc.recorded("register")[0].body["producerName"] == "mine"
    assert producer.producer_name() == "mine"


def test_last_sequence_id_survives_re_creating_a_producer_when_dedup_is_on(svc, client):
    svc.engine.namespaces.set_deduplication("public", "default", True)
    first = client.create_producer("t", producer_name="p")
    assert first.last_sequence_id() == -1
    for _ in range(3):
        first.send(b"x")
    assert first.last_sequence_id() == 2
    first.close()
    again = client.create_producer("t", producer_name="p")
    assert again.last_sequence_id() == 2
    again.send(b"y")
    assert svc.recorded("produce")[-1].body.messages[0].sequence_id == 3
    ahead = client.create_producer("t", producer_name="p", initial_sequence_id=10)
    assert ahead.last_sequence_id() == 10
    ahead.send(b"z")
    assert svc.recorded("produce")[-1].body.messages[0].sequence_id == 11


def test_a_resend_of_an_old_sequence_id_succeeds_and_is_dropped(svc, client):
    svc.engine.namespaces.set_deduplication("public", "default", True)
    consumer = client.subscribe("t", "s")
    producer = client.create_producer("t", producer_name="p")
    first = producer.send(b"once", sequence_id=5)
    dup = producer.send(b"once", sequence_id=5)
    assert str(first) == "1:0:-1:-1" and (dup.ledger_id(), dup.entry_id()) == (-1, -1)
    assert consumer.receive(5000).data() == b"once"
    with pytest.raises(pulsar.Timeout):
        consumer.receive(300)


def test_a_second_exclusive_producer_gets_producer_fenced(client):
    holder = client.create_producer("t", access_mode=AM.Exclusive)
    with pytest.raises(pulsar.ProducerFenced):
        client.create_producer("t", access_mode=AM.Exclusive)
    with pytest.raises(pulsar.ProducerFenced):
        client.create_producer("t")  # Shared while an exclusive producer holds the topic
    assert holder.is_connected()


def test_exclusive_with_fencing_fences_the_old_producer_whose_sends_then_fail_fast(svc, client):
    old = client.create_producer("t", access_mode=AM.Exclusive)
    old.send(b"before")
    new = client.create_producer("t", access_mode=AM.ExclusiveWithFencing)
    assert svc.recorded("register")[-1].body["accessMode"] == "ExclusiveWithFencing"
    with pytest.raises(pulsar.ProducerFenced):
        old.send(b"after")
    posts = len(svc.recorded("produce"))
    with pytest.raises(pulsar.ProducerFenced):
        old.send(b"again")
    got = []
    old.send_async(b"async", lambda r, m: got.append(r))
    assert got == [pulsar.Result.ProducerFenced]
    assert len(svc.recorded("produce")) == posts and not old.is_connected()
    new.send(b"new")


def test_wait_for_exclusive_blocks_until_the_holder_closes(svc, client):
    holder = client.create_producer("t", access_mode=AM.Exclusive)
    created = threading.Event()
    waiter: list = []

    def create() -> None:
        waiter.append(client.create_producer("t", access_mode=AM.WaitForExclusive))
        created.set()

    th = threading.Thread(target=create)
    th.start()
    assert svc.wait_for(lambda s: len(s.recorded("register")) == 2)
    assert svc.recorded("register")[1].body == {"accessMode": "WaitForExclusive", "waitMs": 20000}
    assert not created.is_set()
    holder.close()
    assert created.wait(5)
    th.join()
    waiter[0].send(b"mine now")


def test_wait_for_exclusive_asks_again_after_producer_busy(svc, client):
    svc.fail_next("register", 409, "ProducerBusy")
    producer = client.create_producer("t", access_mode=AM.WaitForExclusive)
    assert len(svc.recorded("register")) == 2
    producer.send(b"x")


def test_shared_producers_both_send(svc, client):
    a, b = client.create_producer("t"), client.create_producer("t")
    a.send(b"a")
    b.send(b"b")
    assert len(svc.recorded("produce")) == 2


def test_exclusive_producers_heartbeat_every_third_of_the_lease_and_release_on_close(svc):
    svc.configure(producer_lease_ms=150)
    client = pulsar.Client(svc.url)
    producer = client.create_producer("t", access_mode=AM.Exclusive)
    assert svc.wait_for(lambda s: len(s.recorded("heartbeat")) >= 3)
    beat = svc.recorded("heartbeat")[0]
    name = producer.producer_name()
    assert beat.path == f"/v1/{TOPIC}/producers/{name}/heartbeat"
    assert beat.query == {"epoch": "1"}
    producer.close()
    [release] = svc.recorded("release")
    assert release.method == "DELETE" and release.query == {"epoch": "1"}
    assert release.path == f"/v1/{TOPIC}/producers/{name}"
    beats = len(svc.recorded("heartbeat"))
    assert sdk_threads() == []
    assert len(svc.recorded("heartbeat")) == beats
    client.close()


def test_shared_producers_send_no_heartbeats_and_release_on_close(svc, client):
    svc.configure(producer_lease_ms=30)
    producer = client.create_producer("t")
    producer.send(b"x")
    producer.close()
    assert svc.recorded("heartbeat") == [] and len(svc.recorded("release")) == 1


def test_a_lost_lease_fences_the_producer(svc, client):
    svc.configure(producer_lease_ms=150)
    producer = client.create_producer("t", access_mode=AM.Exclusive)
    key = svc.key_of(TOPIC)
    lease = svc.stores.producer_state.lease(key)
    lease.holder, lease.epoch = None, lease.epoch + 1  # the lease lapsed; the topic reopened
    svc.stores.producer_state.put_lease(key, lease)
    assert svc.wait_for(lambda s: len(s.recorded("heartbeat")) >= 1)
    with pytest.raises(pulsar.ProducerFenced):
        for _ in range(100):  # fails fast once the failed heartbeat is processed
            producer.send(b"x")


def test_a_partitioned_topic_registers_every_partition_under_one_name(svc, client):
    svc.create_partitioned_topic(TOPIC, 3)
    producer = client.create_producer("t", access_mode=AM.Exclusive)
    regs = svc.recorded("register")
    assert [r.path for r in regs] == [f"/v1/{TOPIC}-partition-{i}/producers" for i in range(3)]
    assert "producerName" not in regs[0].body
    assert [r.body.get("producerName") for r in regs[1:]] == [producer.producer_name()] * 2
    for i in range(3):
        producer.send(b"x", partition_key=f"k{i}")
    assert all(p.query == {"epoch": "1"} for p in svc.recorded("produce"))
    producer.close()
    assert len(svc.recorded("release")) == 3


def test_a_failed_registration_releases_the_partitions_already_taken(svc, client):
    svc.create_partitioned_topic(TOPIC, 2)
    other = topic_name(f"{TOPIC}-partition-1")
    svc.engine.access.register(other, "other", "Exclusive")  # holds partition 1
    with pytest.raises(pulsar.ProducerFenced):
        client.create_producer("t", access_mode=AM.Exclusive)
    [release] = svc.recorded("release")
    name = svc.recorded("register")[0]  # the name partition 0 was registered under
    assert release.path.startswith(f"/v1/{TOPIC}-partition-0/producers/magnetar-")
    assert name.path == f"/v1/{TOPIC}-partition-0/producers"
    assert svc.stores.producer_state.lease(svc.key_of(f"{TOPIC}-partition-0")).holder is None
    assert svc.stores.producer_state.lease(svc.key_of(str(other))).holder == "other"
