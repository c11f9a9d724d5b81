"""Server-side dead letter topic on the emulator: counts, order, properties, batches, and
exactly once into the dead letter topic when a process dies between the steps."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

import pytest
from delivered import entry_ids, payloads

from magnetar_core.adapters.aws.clients import REQUESTS
from magnetar_core.domain.dead_letter import DeadLetterPolicy
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.ids import format_message_id
from magnetar_wire.names import TopicName


class ProcessDied(BaseException):
    """A container dying mid-request: nothing below the test catches it."""


def dlq_of(topic: TopicName, subscription: str) -> TopicName:
    base = topic.base
    return TopicName(base.domain, base.tenant, base.namespace, f"{base.local}-{subscription}-DLQ")


def dead_lettered(engine, dlq: TopicName, sub: str = "inspect") -> list[EntryMessage]:
    """Every message in ``dlq`` (read through a fresh subscription at Earliest)."""
    subs = engine.subscriptions
    c = subs.subscribe(dlq, sub, "inspector", "Shared", earliest=True)
    out = []
    for d in subs.receive(dlq, sub, c.consumer_id, 1000, 0):
        messages = decode_entry(d.data).messages
        indexes = d.batch_indexes if d.batch_indexes is not None else range(len(messages))
        out.extend(messages[i] for i in indexes)
    return out


def nack_rounds(subs, topic, sub, consumer_id, rounds: int) -> list[list[int]]:
    """Receive and nack everything ``rounds`` times; returns the redelivery counts seen."""
    seen = []
    for _ in range(rounds):
        got = subs.receive(topic, sub, consumer_id, 100, 0)
        seen.append([d.redelivery_count for d in got])
        subs.negative_acknowledge(topic, sub, consumer_id, entry_ids(got))
    return seen


def ledger_of(engine, topic: TopicName) -> int:
    return engine.topics.resolve(topic, create=False).ledger_id


def outbox_of(engine, topic: TopicName, sub: str):
    ref = engine.topics.resolve(topic, create=False)
    return engine.subscriptions.context.cursors.get(ref.key, sub).dead_letters


def test_a_message_is_delivered_max_plus_one_times_then_lands_in_the_dlq_once_with_its_data(
    engine, topic
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(2))
    original = EntryMessage(
        payload=b"poison",
        sequence_id=7,
        publish_time_ms=1_700_000_000_000,
        key="k1",
        ordering_key=b"ok",
        properties={"attempt": "x"},
        event_time_ms=1_650_000_000_000,
    )
    engine.producer.publish(topic, encode_entry([original], producer_name="p"))

    assert nack_rounds(subs, topic, "dl", c.consumer_id, 3) == [[0], [1], [2]]
    assert subs.receive(topic, "dl", c.consumer_id, 10, 0) == []

    [moved] = dead_lettered(engine, dlq_of(topic, "dl"))
    assert (moved.payload, moved.key, moved.ordering_key) == (b"poison", "k1", b"ok")
    assert moved.event_time_ms == 1_650_000_000_000 and moved.deliver_at_ms == 0
    assert dict(moved.properties) == {
        "attempt": "x",
        "REAL_TOPIC": str(topic),
        "ORIGIN_MESSAGE_ID": format_message_id(ledger_of(engine, topic), 0, -1, -1),
    }
    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"]["dl"]
    assert (stats["msgBacklog"], stats["unackedMessages"]) == (0, 0)
    assert outbox_of(engine, topic, "dl") == []


def test_exhausted_entries_go_to_the_dlq_in_entry_order(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    for name in (b"m0", b"m1", b"m2"):
        engine.producer.publish(topic, make_entry(name))

    assert nack_rounds(subs, topic, "dl", c.consumer_id, 2) == [[0, 0, 0], [1, 1, 1]]
    assert subs.receive(topic, "dl", c.consumer_id, 10, 0) == []

    moved = dead_lettered(engine, dlq_of(topic, "dl"))
    ledger = ledger_of(engine, topic)
    assert [m.payload for m in moved] == [b"m0", b"m1", b"m2"]
    assert [m.properties["ORIGIN_MESSAGE_ID"] for m in moved] == [
        format_message_id(ledger, e, -1, -1) for e in range(3)
    ]
    assert [m.sequence_id for m in moved] == [0, 1, 2]


def test_healthy_messages_keep_flowing_while_a_poison_one_is_dead_lettered(
    engine, topic, make_entry
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    engine.producer.publish(topic, make_entry(b"poison"))
    for _ in range(2):
        got = subs.receive(topic, "dl", c.consumer_id, 10, 0)
        subs.negative_acknowledge(topic, "dl", c.consumer_id, entry_ids(got))
    engine.producer.publish(topic, make_entry(b"fine"))

    got = subs.receive(topic, "dl", c.consumer_id, 10, 0)

    assert payloads(got) == [b"fine"] and [d.redelivery_count for d in got] == [0]
    assert [m.payload for m in dead_lettered(engine, dlq_of(topic, "dl"))] == [b"poison"]


def test_a_batch_sends_only_its_unacknowledged_messages_with_their_batch_ids(
    engine, topic, make_entry
):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    engine.producer.publish(topic, make_entry(b"a", b"b", b"c"))
    ledger = ledger_of(engine, topic)
    first = subs.receive(topic, "dl", c.consumer_id, 10, 0)
    subs.acknowledge(topic, "dl", c.consumer_id, [format_message_id(ledger, 0, -1, 1)], False)
    subs.negative_acknowledge(topic, "dl", c.consumer_id, entry_ids(first))
    again = subs.receive(topic, "dl", c.consumer_id, 10, 0)
    assert [d.batch_indexes for d in again] == [(0, 2)]
    subs.negative_acknowledge(topic, "dl", c.consumer_id, entry_ids(again))

    assert subs.receive(topic, "dl", c.consumer_id, 10, 0) == []
    moved = dead_lettered(engine, dlq_of(topic, "dl"))
    assert [m.payload for m in moved] == [b"a", b"c"]
    assert [m.properties["ORIGIN_MESSAGE_ID"] for m in moved] == [
        format_message_id(ledger, 0, -1, 0),
        format_message_id(ledger, 0, -1, 2),
    ]
    assert engine.admin.stats(topic, partitioned=False)["subscriptions"]["dl"]["msgBacklog"] == 0


def test_the_initial_subscription_exists_on_a_named_dlq_before_its_first_message(
    engine, topic, make_entry, monkeypatch
):
    dlq = TopicName.parse(f"persistent://public/default/dead-{uuid.uuid4().hex[:8]}")
    policy = DeadLetterPolicy(1, str(dlq), "ops")
    subs = engine.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=policy)
    engine.producer.publish(topic, make_entry(b"m"))
    seen_before_publish = []
    publish = engine.producer.publish

    def spy(target, *args, **kwargs):
        ref = engine.topics.resolve(target, create=False)
        seen_before_publish.append(subs.context.cursors.get(ref.key, "ops") is not None)
        return publish(target, *args, **kwargs)

    monkeypatch.setattr(engine.producer, "publish", spy)
    nack_rounds(subs, topic, "dl", c.consumer_id, 2)
    assert subs.receive(topic, "dl", c.consumer_id, 10, 0) == []

    assert seen_before_publish == [True]
    ops = subs.subscribe(dlq, "ops", "ops", "Shared", earliest=False)  # exists: keeps Earliest
    assert payloads(subs.receive(dlq, "ops", ops.consumer_id, 10, 0)) == [b"m"]


def test_a_crash_between_publish_and_ack_still_puts_the_message_in_the_dlq_exactly_once(
    new_engine, topic, make_entry
):
    first, second = new_engine(), new_engine()
    subs = first.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    first.producer.publish(topic, make_entry(b"once"))
    nack_rounds(subs, topic, "dl", c.consumer_id, 2)

    def die(*_args, **_kwargs):
        raise ProcessDied()

    subs.dead_letters.settle = die  # the container dies right after the DLQ commit
    with pytest.raises(ProcessDied):
        subs.receive(topic, "dl", c.consumer_id, 10, 0)
    assert [d.entry_id for d in outbox_of(second, topic, "dl")] == [0]
    results = []
    publish = second.producer.publish
    second.producer.publish = lambda *a, **k: results.append(publish(*a, **k)) or results[-1]

    assert second.subscriptions.receive(topic, "dl", c.consumer_id, 10, 0) == []

    assert [r.duplicate for r in results] == [True]  # the resumed publish was refused
    assert [m.payload for m in dead_lettered(second, dlq_of(topic, "dl"))] == [b"once"]
    assert outbox_of(second, topic, "dl") == []
    stats = second.admin.stats(topic, partitioned=False)["subscriptions"]["dl"]
    assert stats["msgBacklog"] == 0


def test_a_crash_before_the_publish_is_resumed_by_another_container(new_engine, topic, make_entry):
    first, second = new_engine(), new_engine()
    subs = first.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    first.producer.publish(topic, make_entry(b"m0"))
    first.producer.publish(topic, make_entry(b"m1"))
    nack_rounds(subs, topic, "dl", c.consumer_id, 2)

    def die(*_args, **_kwargs):
        raise ProcessDied()

    first.producer.publish = die  # dies after the outbox write, before any DLQ commit
    with pytest.raises(ProcessDied):
        subs.receive(topic, "dl", c.consumer_id, 10, 0)
    assert [d.entry_id for d in outbox_of(second, topic, "dl")] == [0, 1]

    assert second.subscriptions.receive(topic, "dl", c.consumer_id, 10, 0) == []

    assert [m.payload for m in dead_lettered(second, dlq_of(topic, "dl"))] == [b"m0", b"m1"]
    assert outbox_of(second, topic, "dl") == []


def test_a_retried_drain_on_a_stale_cursor_adds_nothing_to_the_dlq(new_engine, topic, make_entry):
    first, second = new_engine(), new_engine()
    subs = first.subscriptions
    c = subs.subscribe(topic, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    first.producer.publish(topic, make_entry(b"m0"))
    nack_rounds(subs, topic, "dl", c.consumer_id, 2)
    ref = first.topics.resolve(topic, create=False)
    settle = subs.dead_letters.settle

    def die(*_args, **_kwargs):
        raise ProcessDied()

    subs.dead_letters.settle = die
    with pytest.raises(ProcessDied):
        subs.receive(topic, "dl", c.consumer_id, 10, 0)
    stale = first.subscriptions.context.cursors.get(ref.key, "dl")
    assert second.subscriptions.receive(topic, "dl", c.consumer_id, 10, 0) == []

    subs.dead_letters.settle = settle  # the first container retries its step, late
    assert subs.dead_letters.drain(ref, stale) == 0

    assert [m.payload for m in dead_lettered(second, dlq_of(topic, "dl"))] == [b"m0"]


def test_every_partition_dead_letters_into_one_topic_named_after_the_base(engine, make_entry):
    base = TopicName.parse(f"persistent://public/default/dlp-{uuid.uuid4().hex[:8]}")
    engine.topics.create(base, 2)
    subs = engine.subscriptions
    for i in range(2):
        part = base.partition(i)
        c = subs.subscribe(part, "dl", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
        engine.producer.publish(part, make_entry(f"p{i}".encode()))
        nack_rounds(subs, part, "dl", c.consumer_id, 2)
        assert subs.receive(part, "dl", c.consumer_id, 10, 0) == []

    moved = dead_lettered(engine, dlq_of(base, "dl"))
    assert sorted((m.payload, m.properties["REAL_TOPIC"]) for m in moved) == [
        (b"p0", str(base.partition(0))),
        (b"p1", str(base.partition(1))),
    ]


def test_key_shared_dead_letters_too(engine, topic):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "ks", "c", "Key_Shared", True, dead_letter=DeadLetterPolicy(1))
    message = EntryMessage(payload=b"keyed", publish_time_ms=1, key="k")
    engine.producer.publish(topic, encode_entry([message], producer_name="p"))

    assert nack_rounds(subs, topic, "ks", c.consumer_id, 2) == [[0], [1]]
    assert subs.receive(topic, "ks", c.consumer_id, 10, 0) == []
    assert [m.key for m in dead_lettered(engine, dlq_of(topic, "ks"))] == ["k"]


def test_an_exclusive_subscription_never_dead_letters_as_in_pulsar(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "ex", "c", "Exclusive", True, dead_letter=DeadLetterPolicy(1))
    engine.producer.publish(topic, make_entry(b"m"))

    assert nack_rounds(subs, topic, "ex", c.consumer_id, 3) == [[0], [1], [2]]
    assert outbox_of(engine, topic, "ex") == []


def test_the_latest_subscribers_policy_wins(engine, topic):
    subs = engine.subscriptions
    subs.subscribe(topic, "sh", "a", "Shared", True, dead_letter=DeadLetterPolicy(5))
    subs.subscribe(topic, "sh", "b", "Shared", True, dead_letter=DeadLetterPolicy(2, None, "x"))
    ref = engine.topics.resolve(topic, create=False)
    assert subs.context.cursors.get(ref.key, "sh").dead_letter_policy == DeadLetterPolicy(
        2, None, "x"
    )

    subs.subscribe(topic, "sh", "c", "Shared", True)
    assert subs.context.cursors.get(ref.key, "sh").dead_letter_policy is None


def test_a_dispatch_with_a_policy_costs_no_extra_aws_request(engine, topic, make_entry):
    subs = engine.subscriptions
    plain = subs.subscribe(topic, "plain", "c", "Shared", True)
    policed = subs.subscribe(topic, "policed", "c", "Shared", True, dead_letter=DeadLetterPolicy(1))
    engine.producer.publish(topic, make_entry(b"m"))
    costs = {}
    for sub, handle in (("plain", plain), ("policed", policed)):
        got = subs.receive(topic, sub, handle.consumer_id, 10, 0)  # warms the caches alike
        subs.negative_acknowledge(topic, sub, handle.consumer_id, entry_ids(got), 0)
    for sub, handle in (("plain", plain), ("policed", policed)):
        with REQUESTS.on_this_thread() as costs[sub]:
            got = subs.receive(topic, sub, handle.consumer_id, 10, 0)
        assert len(got) == 1

    assert costs["policed"] == costs["plain"]


def _post(url: str, body: object) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize(
    "policy",
    [
        {"maxRedeliverCount": 0},
        {"maxRedeliverCount": True},
        {"deadLetterTopic": "x"},
        {"maxRedeliverCount": 3, "retryLetterTopic": "x"},
        {"maxRedeliverCount": 3, "deadLetterTopic": "non-persistent://public/default/x"},
        {"maxRedeliverCount": 3, "initialSubscriptionName": "bad name"},
        [3],
    ],
)
def test_a_bad_dead_letter_policy_is_refused_with_400_and_creates_nothing(
    local_stack, engine, topic, policy
):
    path = f"/v1/persistent/public/default/{topic.local}/subscriptions/s/consumers"
    body = {"subscriptionType": "Shared", "deadLetterPolicy": policy}

    status, reply = _post(local_stack.url + path, body)

    assert (status, reply["error"]) == (400, "InvalidMessage")
    meta = engine.topics.fresh_meta(topic)  # its ledger, if the topic exists
    assert (
        meta is None or engine.subscriptions.context.cursors.list(f"{topic}|{meta.ledger_id}") == []
    )


def test_the_subscribe_body_sets_the_dead_letter_policy_over_http(local_stack, engine, topic):
    path = f"/v1/persistent/public/default/{topic.local}/subscriptions/s/consumers"
    policy = {"maxRedeliverCount": 3, "deadLetterTopic": "dead", "initialSubscriptionName": "ops"}

    status, _ = _post(
        local_stack.url + path, {"subscriptionType": "Shared", "deadLetterPolicy": policy}
    )

    assert status == 200
    ref = engine.topics.resolve(topic, create=False)
    stored = engine.subscriptions.context.cursors.get(ref.key, "s").dead_letter_policy
    assert stored == DeadLetterPolicy(3, "persistent://public/default/dead", "ops")
