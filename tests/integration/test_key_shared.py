"""Key_Shared subscriptions on the emulator: routing by key, batches split by delivery masks,
joins that move keys as AUTO_SPLIT says, draining that keeps each key's order, STICKY ranges,
stats."""

from __future__ import annotations

import http.client
import json
import random
from collections import Counter
from urllib.parse import urlsplit

import pytest

from magnetar_core.domain.cursor.state import KeySharedOptions
from magnetar_core.domain.errors import CumulativeAcknowledgementNotAllowedError
from magnetar_core.domain.keyshared import HashRangeConflict, sticky_key_hash
from magnetar_wire import EntryMessage, decode_entry, encode_entry
from magnetar_wire.ids import format_message_id

KEYS = [f"key-{i}" for i in range(16)]


def batch(*keyed: tuple[str | None, bytes]) -> bytes:
    """One batch entry whose messages carry their own keys."""
    messages = [
        EntryMessage(payload=p, sequence_id=i, publish_time_ms=1_700_000_000_000 + i, key=k)
        for i, (k, p) in enumerate(keyed)
    ]
    return encode_entry(messages, producer_name="ks-producer")


def publish_keyed(engine, topic, entries, per_entry, seed=7, sent=None) -> list[str]:
    """Publish batches of messages with random keys; payloads are ``key/n``, ``n`` counting
    that key's messages (in ``sent``, shared across calls). Returns keys in publish order."""
    rng = random.Random(seed)
    sent = Counter() if sent is None else sent
    order = []
    for _ in range(entries):
        keyed = []
        for _ in range(per_entry):
            key = rng.choice(KEYS)
            keyed.append((key, f"{key}/{sent[key]}".encode()))
            sent[key] += 1
            order.append(key)
        engine.producer.publish(topic, batch(*keyed))
    return order


def received(delivered) -> list[tuple[str, str, int]]:
    """``(key, payload, message id)`` of each delivered message, honouring delivery masks."""
    out = []
    for d in delivered:
        messages = decode_entry(d.data).messages
        indexes = d.batch_indexes if d.batch_indexes is not None else range(len(messages))
        for i in indexes:
            mid = format_message_id(d.ledger_id, d.entry_id, d.partition, i)
            out.append((messages[i].key, messages[i].payload.decode(), mid))
    return out


def drain(engine, topic, sub, consumers, ack=True, rounds=20):
    """Receive (and ack) round the consumers until nothing comes; messages per consumer."""
    got = {c.consumer_name: [] for c in consumers}
    for _ in range(rounds):
        moved = False
        for c in consumers:
            messages = received(engine.subscriptions.receive(topic, sub, c.consumer_id, 50, 0))
            got[c.consumer_name] += messages
            if messages and ack:
                ids = [m[2] for m in messages]
                engine.subscriptions.acknowledge(topic, sub, c.consumer_id, ids, False)
            moved |= bool(messages)
        if not moved:
            return got
    return got


def owner_ranges(engine, topic, sub) -> dict[str, list[list[int]]]:
    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"][sub]
    return {c["consumerName"]: c["keyHashRangeArrays"] for c in stats["consumers"]}


def owner_of(ranges, key) -> str:
    h = sticky_key_hash(key)
    return next(name for name, rs in ranges.items() if any(s <= h <= e for s, e in rs))


def test_four_consumers_each_get_whole_keys_in_order_from_batched_entries(engine, topic):
    subs = engine.subscriptions
    consumers = [
        subs.subscribe(topic, "ks", f"c{i}", "Key_Shared", earliest=True) for i in range(4)
    ]
    order = publish_keyed(engine, topic, entries=12, per_entry=10)

    got = drain(engine, topic, "ks", consumers)

    ranges = owner_ranges(engine, topic, "ks")
    assert ranges == {
        "c0": [[49152, 65535]],
        "c1": [[16384, 32767]],
        "c2": [[0, 16383]],
        "c3": [[32768, 49151]],
    }
    assert sum(len(m) for m in got.values()) == len(order) == 120
    for name, messages in got.items():
        for key in {k for k, _, _ in messages}:
            assert owner_of(ranges, key) == name
            mine = [p for k, p, _ in messages if k == key]
            assert mine == [f"{key}/{n}" for n in range(order.count(key))]
    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"]["ks"]
    assert (stats["msgBacklog"], stats["unackedMessages"]) == (0, 0)


def test_a_join_moves_only_the_split_keys_and_draining_keeps_their_order(engine, topic):
    subs = engine.subscriptions
    c1 = subs.subscribe(topic, "ks", "c1", "Key_Shared", earliest=True)
    sent = Counter()
    publish_keyed(engine, topic, entries=2, per_entry=16, seed=1, sent=sent)
    first = received(subs.receive(topic, "ks", c1.consumer_id, 100, 0))
    assert len(first) == 32

    c2 = subs.subscribe(topic, "ks", "c2", "KeyShared", earliest=True)
    later = set(publish_keyed(engine, topic, entries=2, per_entry=16, seed=2, sent=sent))
    moved = {k for k in KEYS if sticky_key_hash(k) <= 32767}
    held = {k for k, _, _ in first}

    blocked = received(subs.receive(topic, "ks", c2.consumer_id, 100, 0))
    assert {k for k, _, _ in blocked} == (moved - held) & later
    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"]["ks"]
    by_name = {c["consumerName"]: c for c in stats["consumers"]}
    assert stats["type"] == "Key_Shared" and stats["keySharedMode"] == "AUTO_SPLIT"
    assert by_name["c1"]["drainingHashesCount"] == len({sticky_key_hash(k) for k in moved & held})
    assert by_name["c1"]["drainingHashesUnackedMessages"] == sum(
        1 for k, _, _ in first if k in moved
    )
    assert by_name["c2"]["keyHashRangeArrays"] == [[0, 32767]]

    second = received(subs.receive(topic, "ks", c1.consumer_id, 100, 0))
    assert {k for k, _, _ in second} <= set(KEYS) - moved
    subs.acknowledge(topic, "ks", c1.consumer_id, [m[2] for m in first + second], False)
    after = received(subs.receive(topic, "ks", c2.consumer_id, 100, 0))
    assert {k for k, _, _ in after} == moved & held & later
    for key in moved & held & later:
        seen = [p for k, p, _ in first + blocked + after if k == key]
        assert seen == [f"{key}/{n}" for n in range(sent[key])]
    stats = engine.admin.stats(topic, partitioned=False)["subscriptions"]["ks"]
    c1_stats = next(c for c in stats["consumers"] if c["consumerName"] == "c1")
    assert (c1_stats["drainingHashesCount"], c1_stats["drainingHashes"]) == (0, [])
    assert c1_stats["drainingHashesClearedTotal"] == len({sticky_key_hash(k) for k in moved & held})


def test_keyless_messages_all_go_to_the_one_consumer_of_the_none_key_hash(engine, topic):
    subs = engine.subscriptions
    consumers = [
        subs.subscribe(topic, "ks", f"c{i}", "Key_Shared", earliest=True) for i in range(3)
    ]
    engine.producer.publish(topic, batch(*[(None, f"m{i}".encode()) for i in range(5)]))
    got = drain(engine, topic, "ks", consumers)
    assert sorted((n, [p for _, p, _ in m]) for n, m in got.items() if m) == [
        (owner_of(owner_ranges(engine, topic, "ks"), "NONE_KEY"), ["m0", "m1", "m2", "m3", "m4"])
    ]


def test_sticky_ranges_are_served_and_an_overlap_is_refused(engine, topic):
    subs = engine.subscriptions
    low = KeySharedOptions.parse("Sticky", [[0, 32767]])
    subs.subscribe(topic, "st", "low", "Key_Shared", earliest=True, key_shared=low)
    with pytest.raises(HashRangeConflict) as caught:
        overlap = KeySharedOptions.parse("Sticky", [[30000, 65535]])
        subs.subscribe(topic, "st", "bad", "Key_Shared", earliest=True, key_shared=overlap)
    assert (caught.value.code, caught.value.status) == ("ConsumerAssignError", 409)
    high = KeySharedOptions.parse("Sticky", [[32768, 65535]])
    subs.subscribe(topic, "st", "high", "Key_Shared", earliest=True, key_shared=high)
    assert owner_ranges(engine, topic, "st") == {"high": [[32768, 65535]], "low": [[0, 32767]]}


def test_cumulative_acks_are_refused_on_key_shared(engine, topic, make_entry):
    subs = engine.subscriptions
    c = subs.subscribe(topic, "ks", "c", "Key_Shared", earliest=True)
    engine.producer.publish(topic, make_entry(b"x", key="k"))
    got = received(subs.receive(topic, "ks", c.consumer_id, 10, 0))
    with pytest.raises(CumulativeAcknowledgementNotAllowedError):
        subs.acknowledge(topic, "ks", c.consumer_id, [got[0][2]], cumulative=True)


def _post(local_stack, path: str, body: dict) -> tuple[int, dict]:
    url = urlsplit(local_stack.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def test_the_subscribe_route_takes_key_shared_fields_and_answers_assign_errors(local_stack, topic):
    path = f"/v1/persistent/public/default/{topic.local}/subscriptions/ks/consumers"
    sticky = {"subscriptionType": "Key_Shared", "keySharedMode": "Sticky"}
    status, body = _post(local_stack, path, {**sticky, "stickyRanges": [[0, 99]]})
    assert (status, body["consumerName"] != "") == (200, True)
    status, body = _post(local_stack, path, {**sticky, "stickyRanges": [[50, 150]]})
    assert (status, body["error"]) == (409, "ConsumerAssignError")
    status, body = _post(local_stack, path, {**sticky, "stickyRanges": [[9, 1]]})
    assert (status, body["error"]) == (400, "ConsumerAssignError")
    status, body = _post(local_stack, path, {**sticky, "keySharedMode": "Random"})
    assert (status, body["error"]) == (400, "ConsumerAssignError")
