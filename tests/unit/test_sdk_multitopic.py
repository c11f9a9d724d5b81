"""Multi-topic consumers (a list of topics, a regex with auto-discovery) against the engine on
in-memory adapters."""

from __future__ import annotations

import gc
import re

import pytest

import magnetar as pulsar
from magnetar_local.memory_service import sdk_threads, topic_name

EARLIEST = pulsar.InitialPosition.Earliest
NS = "persistent://public/default"


def send(client, topic, *payloads):
    producer = client.create_producer(topic)
    for p in payloads:
        producer.send(p)
    producer.close()


def receive_all(consumer, count):
    return [consumer.receive(5000) for _ in range(count)]


def test_multi_topic_consumer_receives_from_all_listed_topics_and_acks_route_to_each(client, svc):
    svc.create_partitioned_topic("persistent/public/default/b", 2)
    consumer = client.subscribe(["a", "b", "persistent://public/default/c"], "s",
                                initial_position=EARLIEST)  # fmt: skip
    send(client, "a", b"a1", b"a2")
    send(client, "b", b"b1", b"b2", b"b3")
    send(client, "c", b"c1")
    got = receive_all(consumer, 6)
    assert sorted(m.data() for m in got) == [b"a1", b"a2", b"b1", b"b2", b"b3", b"c1"]
    by_topic = {}
    for m in got:
        by_topic.setdefault(m.topic_name(), []).append(m.data())
        consumer.acknowledge(m)
    assert by_topic[f"{NS}/a"] == [b"a1", b"a2"]  # per-topic order
    assert by_topic[f"{NS}/c"] == [b"c1"]
    assert {t for t in by_topic if "/b-partition-" in t} <= {f"{NS}/b-partition-0",
                                                            f"{NS}/b-partition-1"}  # fmt: skip
    consumer.close()
    acked = {}
    for r in svc.recorded("ack"):
        topic = "persistent://" + r.path.split("/v1/persistent/")[1].split("/subscriptions")[0]
        acked[topic] = acked.get(topic, 0) + len(r.body["messageIds"])
    assert acked[f"{NS}/a"] == 2 and acked[f"{NS}/c"] == 1
    assert sum(n for t, n in acked.items() if "/b-partition-" in t) == 3
    assert sum(acked.values()) == 6


def test_ack_of_a_topic_less_message_id_on_a_multi_topic_consumer_raises(client):
    consumer = client.subscribe(["a", "b"], "s", initial_position=EARLIEST)
    send(client, "a", b"x")
    msg = consumer.receive(5000)
    bare = pulsar.MessageId.deserialize(msg.message_id().serialize())
    assert bare.topic() is None
    with pytest.raises(pulsar.OperationNotSupported, match="carries no topic"):
        consumer.acknowledge(bare)
    with pytest.raises(pulsar.OperationNotSupported):
        consumer.acknowledge_cumulative(bare)
    other = pulsar.MessageId.deserialize(msg.message_id().serialize(), f"{NS}/zzz")
    with pytest.raises(pulsar.OperationNotSupported, match="not one this consumer"):
        consumer.acknowledge(other)
    with_topic = pulsar.MessageId.deserialize(msg.message_id().serialize(), f"{NS}/a")
    consumer.acknowledge(with_topic)  # a deserialized id with its topic is fine


def test_a_single_element_list_is_a_multi_topic_consumer_too(client):
    consumer = client.subscribe(["a"], "s", initial_position=EARLIEST)
    send(client, "a", b"x")
    msg = consumer.receive(5000)
    with pytest.raises(pulsar.OperationNotSupported):
        consumer.acknowledge(pulsar.MessageId.deserialize(msg.message_id().serialize()))


def test_topic_of_a_multi_topic_consumer_is_what_pulsar_client_returns(client):
    listed = client.subscribe(["a", "b"], "s1")
    assert re.fullmatch(rf"{NS}/b-TopicsConsumerFakeName-[0-9a-f]{{10}}", listed.topic())
    pattern = client.subscribe(re.compile("persistent://public/default/fin-.*"), "s2")
    assert pattern.topic() == f"{NS}/fin-.*"
    short = client.subscribe(re.compile("fin-.*"), "s3")
    assert short.topic() == f"{NS}/fin-.*"
    assert client.subscribe("a", "s4").topic() == f"{NS}/a"


def test_regex_subscribes_to_the_matching_topics_of_the_namespace_only(client, svc):
    svc.create_namespaces("other/default")
    svc.create_partitioned_topic("persistent/public/default/finance-p", 2)
    send(client, "finance-eu", b"eu")
    send(client, "marketing", b"no")
    send(client, "persistent://other/default/finance-x", b"other namespace")
    consumer = client.subscribe(re.compile("persistent://public/default/finance-.*"), "s",
                                initial_position=EARLIEST)  # fmt: skip
    subscribed = {r.path.split("/subscriptions")[0] for r in svc.recorded("subscribe")}
    assert subscribed == {"/v1/persistent/public/default/finance-eu",
                          "/v1/persistent/public/default/finance-p-partition-0",
                          "/v1/persistent/public/default/finance-p-partition-1"}  # fmt: skip
    assert consumer.receive(5000).data() == b"eu"


def test_regex_discovery_picks_up_a_topic_created_later(client, svc):
    consumer = client.subscribe(re.compile(f"{NS}/finance-.*"), "s", initial_position=EARLIEST,
                                pattern_auto_discovery_period=1)  # fmt: skip
    with pytest.raises(pulsar.Timeout):
        consumer.receive(100)
    svc.create_partitioned_topic(
        "persistent/public/default/finance-new", 2
    )  # created after subscribing
    assert svc.wait_for(lambda s: len([r for r in s.recorded("subscribe")
                                       if "finance-new" in r.path]) == 2, timeout=10)  # fmt: skip
    send(client, "finance-new", b"n1", b"n2", b"n3")
    got = receive_all(consumer, 3)
    assert sorted(m.data() for m in got) == [b"n1", b"n2", b"n3"]
    assert {m.topic_name().rsplit("-partition-", 1)[0] for m in got} == {f"{NS}/finance-new"}
    for m in got:
        consumer.acknowledge(m)
    consumer.close()
    assert len(svc.recorded("ack")) >= 1


def test_regex_discovery_closes_the_sub_consumers_of_a_deleted_topic(client, svc):
    send(client, "finance-old", b"x")
    consumer = client.subscribe(re.compile(f"{NS}/finance-.*"), "s", initial_position=EARLIEST,
                                pattern_auto_discovery_period=1)  # fmt: skip
    assert consumer.receive(5000).data() == b"x"
    old = topic_name("persistent/public/default/finance-old")
    svc.engine.admin.delete_topic(old, partitioned=False, force=True)
    assert svc.wait_for(lambda s: s.recorded("close"), timeout=10)
    # the sub-consumer's receive thread is joined before its DELETE is sent
    assert not [t for t in sdk_threads() if "finance-old" in t.name]
    assert consumer.is_connected()


def test_the_regex_subscription_mode_picks_the_domains_listed(client, svc):
    np = topic_name("non-persistent/public/default/finance-np")
    svc.engine.topics.resolve(np, create=True, allow_non_persistent=True)
    send(client, "finance-p", b"p")
    every = client.subscribe(re.compile(f"{NS}/finance-.*"), "s", initial_position=EARLIEST,
                             regex_subscription_mode=pulsar.RegexSubscriptionMode.AllTopics)  # fmt: skip
    assert every.receive(5000).data() == b"p"
    only_np = client.subscribe(re.compile(f"{NS}/finance-.*"), "s2",
                               regex_subscription_mode=pulsar.RegexSubscriptionMode.NonPersistentOnly)  # fmt: skip
    with pytest.raises(pulsar.Timeout):
        only_np.receive(50)
    subscribed = sorted((r.path.split("/subscriptions/")[0], r.path.split("/")[-2])
                        for r in svc.recorded("subscribe"))  # fmt: skip
    assert subscribed == [
        ("/v1/non-persistent/public/default/finance-np", "s"),
        ("/v1/non-persistent/public/default/finance-np", "s2"),
        ("/v1/persistent/public/default/finance-p", "s"),
    ]


def test_a_named_non_persistent_topic_is_subscribed_like_any_other(client, svc):
    client.subscribe(["a", "non-persistent://public/default/np"], "s")
    assert {r.path.split("/subscriptions/")[0] for r in svc.recorded("subscribe")} == {
        "/v1/persistent/public/default/a",
        "/v1/non-persistent/public/default/np",
    }


def test_no_threads_after_closing_multi_topic_and_regex_consumers(svc):
    before = sdk_threads()
    client = pulsar.Client(svc.url)
    send(client, "finance-a", b"x")
    listed = client.subscribe(["a", "b"], "s1")
    regex = client.subscribe(re.compile(f"{NS}/finance-.*"), "s2", pattern_auto_discovery_period=1)
    names = {t.name for t in sdk_threads()}
    assert f"magnetar-discovery-{NS}/finance-.*" in names
    listed.close()
    regex.close()
    assert sdk_threads() == before
    regex2 = client.subscribe(re.compile(f"{NS}/finance-.*"), "s3")
    del regex2  # dropping the consumer stops its discovery thread too
    gc.collect()
    assert sdk_threads() == before
    client.subscribe(re.compile(f"{NS}/finance-.*"), "s4")
    client.close()
    assert sdk_threads() == before


def test_invalid_patterns_raise_invalid_topic_name(client):
    with pytest.raises(pulsar.InvalidTopicName):
        client.subscribe(re.compile("persistent://public/default/a/b/.*"), "s")
    with pytest.raises(pulsar.InvalidTopicName):
        client.subscribe(re.compile("(persistent://public/default/x)"), "s")
