"""Dead letter policy, outbox and DLQ entries, pure (no AWS)."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.state import EXCLUSIVE, SHARED, CursorState
from magnetar_core.domain.dead_letter import (
    DeadLetter,
    DeadLetterPolicy,
    Origin,
    dead_letter_entry,
    producer_name,
)
from magnetar_core.domain.errors import InvalidMessage, InvalidTopicName
from magnetar_core.domain.rangeset import RangeSet
from magnetar_wire import Codec, EntryMessage, decode_entry, encode_entry
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://acme/orders/in-partition-3")


def test_the_policy_parses_the_subscribe_body_field_with_full_topic_names():
    policy = DeadLetterPolicy.parse(
        {"maxRedeliverCount": 4, "deadLetterTopic": "dead", "initialSubscriptionName": "ops"}
    )
    assert policy == DeadLetterPolicy(4, "persistent://public/default/dead", "ops")
    assert DeadLetterPolicy.parse({"maxRedeliverCount": 1, "deadLetterTopic": None}) == (
        DeadLetterPolicy(1)
    )
    assert DeadLetterPolicy.parse(None) is None


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"maxRedeliverCount": 0},
        {"maxRedeliverCount": 1.5},
        {"maxRedeliverCount": False},
        {"maxRedeliverCount": 2, "deadLetterTopic": 7},
        {"maxRedeliverCount": 2, "deadLetterTopic": "non-persistent://a/b/c"},
        {"maxRedeliverCount": 2, "initialSubscriptionName": ""},
        {"maxRedeliverCount": 2, "initialSubscriptionName": "a/b"},
        {"maxRedeliverCount": 2, "extra": 1},
        "3",
    ],
)
def test_a_bad_policy_is_an_invalid_message(data):
    with pytest.raises(InvalidMessage):
        DeadLetterPolicy.parse(data)


def test_a_malformed_dead_letter_topic_is_an_invalid_topic_name():
    with pytest.raises(InvalidTopicName):
        DeadLetterPolicy.parse({"maxRedeliverCount": 2, "deadLetterTopic": "a/b"})


def test_the_default_topic_is_the_base_topic_then_the_subscription_then_dlq():
    assert str(DeadLetterPolicy(1).topic_for(TOPIC, "audit")) == (
        "persistent://acme/orders/in-audit-DLQ"
    )
    named = DeadLetterPolicy(1, "persistent://acme/ops/dead")
    assert str(named.topic_for(TOPIC, "audit")) == "persistent://acme/ops/dead"


def test_max_redeliver_count_allows_counts_up_to_it():
    policy = DeadLetterPolicy(2)
    assert [policy.exhausted(n) for n in range(4)] == [False, False, False, True]


def test_policy_and_outbox_items_survive_their_json_forms():
    policy = DeadLetterPolicy(3, "persistent://a/b/c", "init")
    assert DeadLetterPolicy.from_dict(policy.to_dict()) == policy
    assert DeadLetterPolicy.from_dict(DeadLetterPolicy(1).to_dict()) == DeadLetterPolicy(1)
    item = DeadLetter(5, 9, (0, 2), 2, "persistent://a/b/c", "init")
    assert DeadLetter.from_list(item.to_list()) == item


def test_the_producer_name_is_deterministic_per_cursor():
    assert producer_name(TOPIC, "audit", "ab12") == (
        "persistent://acme/orders/in-partition-3-audit-ab12-DLQ"
    )


def test_the_dlq_entry_keeps_the_message_and_adds_its_origin():
    messages = [
        EntryMessage(
            payload=b"p%d" % i,
            sequence_id=100 + i,
            publish_time_ms=1,
            key=f"k{i}",
            ordering_key=b"o",
            properties={"a": "1"} if i else {"REAL_TOPIC": "persistent://x/y/retry"},
            event_time_ms=55,
            deliver_at_ms=99,
        )
        for i in range(3)
    ]
    data = encode_entry(messages, producer_name="orig", codec=Codec.ZLIB)
    item = DeadLetter(40, 7, (0, 2), 2, "persistent://acme/orders/in-audit-DLQ")

    out = decode_entry(dead_letter_entry(data, item, Origin(TOPIC, 4, 3), "dlq-p", 1234))

    assert (out.header.codec, out.header.batched, out.producer_name) == (Codec.ZLIB, True, "dlq-p")
    assert [m.payload for m in out.messages] == [b"p0", b"p2"]
    assert [m.sequence_id for m in out.messages] == [40, 41]
    assert [(m.key, m.ordering_key, m.event_time_ms) for m in out.messages] == [
        ("k0", b"o", 55),
        ("k2", b"o", 55),
    ]
    assert [m.deliver_at_ms for m in out.messages] == [0, 0]
    assert [m.publish_time_ms for m in out.messages] == [1234, 1234]
    assert [dict(m.properties) for m in out.messages] == [
        {"REAL_TOPIC": "persistent://x/y/retry", "ORIGIN_MESSAGE_ID": "4:7:3:0"},
        {"a": "1", "REAL_TOPIC": str(TOPIC), "ORIGIN_MESSAGE_ID": "4:7:3:2"},
    ]


def test_a_single_message_entry_gets_a_batch_index_of_minus_one():
    data = encode_entry([EntryMessage(payload=b"x")], producer_name="orig")
    item = DeadLetter(0, 3, None, 1, "persistent://a/b/c")
    out = decode_entry(dead_letter_entry(data, item, Origin(TOPIC, 1, -1), "p", 1))
    assert out.header.batched is False
    assert out.messages[0].properties["ORIGIN_MESSAGE_ID"] == "1:3:-1:-1"


def cursor(sub_type: str = SHARED, max_count: int = 1) -> CursorState:
    """Entries 0..5 read; 1, 2 and 4 in the redelivery set with counts 2, 1 and 2; 5 leased."""
    state = CursorState.new("audit", sub_type, -1, True)
    state.read_position = 6
    state.redeliver = RangeSet([(1, 2), (4, 4)])
    state.redelivery_counts = {1: 2, 2: 1, 4: 2, 5: 3}
    state.leases = {"c": RangeSet([(0, 0), (5, 5)])}
    state.batch_sizes = {4: 3}
    state.batch_acks = {4: {1}}
    state.dead_letter_policy = DeadLetterPolicy(max_count)
    return state


def test_exhausted_entries_move_from_the_redelivery_set_to_the_outbox_in_order():
    state = cursor()

    assert state.collect_dead_letters(TOPIC, "id1") == 2

    assert state.dead_letters == [
        DeadLetter(0, 1, None, 1, "persistent://acme/orders/in-audit-DLQ"),
        DeadLetter(1, 4, (0, 2), 2, "persistent://acme/orders/in-audit-DLQ"),
    ]
    assert list(state.redeliver) == [2]
    assert (state.dead_letter_next_sequence, state.dead_letter_id) == (3, "id1")
    assert state.collect_dead_letters(TOPIC, "id2") == 0 and state.dead_letter_id == "id1"


def test_no_policy_or_an_exclusive_subscription_collects_nothing():
    state = cursor()
    state.dead_letter_policy = None
    assert state.collect_dead_letters(TOPIC, "i") == 0
    exclusive = cursor(EXCLUSIVE)
    assert exclusive.collect_dead_letters(TOPIC, "i") == 0 and exclusive.dead_letters == []


def test_an_entry_still_leased_to_someone_waits():
    state = cursor()
    state.leases["other"] = RangeSet([(1, 1)])  # Key_Shared: part of it is with a consumer
    state.collect_dead_letters(TOPIC, "i")
    assert [d.entry_id for d in state.dead_letters] == [4]


def test_settling_acknowledges_the_published_entries_and_keeps_later_items():
    state = cursor()
    state.collect_dead_letters(TOPIC, "i")
    state.redelivery_counts[2] = 5
    state.collect_dead_letters(TOPIC, "i")  # entry 2 joins with sequence 3

    assert state.settle_dead_letters(1) == 2

    assert [d.sequence_id for d in state.dead_letters] == [3]
    assert 1 in state.acked and 4 in state.acked and 4 not in state.batch_acks
    assert state.settle_dead_letters(1) == 0


def test_a_seek_drops_pending_dead_letters_but_never_reuses_their_sequence_ids():
    state = cursor()
    state.collect_dead_letters(TOPIC, "i")
    state.seek(0)
    assert state.dead_letters == [] and state.dead_letter_next_sequence == 3


def test_the_cursor_item_carries_the_policy_and_the_outbox():
    state = cursor()
    state.dead_letter_policy = DeadLetterPolicy(1, "persistent://a/b/c", "ops")
    state.collect_dead_letters(TOPIC, "i")

    back = cursor_from_item(cursor_to_item("pk", state))

    assert back.dead_letter_policy == state.dead_letter_policy
    assert back.dead_letters == state.dead_letters
    assert (back.dead_letter_next_sequence, back.dead_letter_id) == (3, "i")
    plain = cursor_from_item(cursor_to_item("pk", CursorState.new("s", SHARED, -1, True)))
    assert (plain.dead_letter_policy, plain.dead_letters, plain.dead_letter_id) == (None, [], "")


def test_an_encrypted_entry_moves_whole_with_its_ciphertext_and_new_properties():
    from magnetar._encryption import cipher as _e2e
    from magnetar_wire import read_metadata, stored_payload

    key = _e2e.ec.generate_private_key(_e2e.ec.SECP256R1())
    encrypt = lambda s: _e2e.encrypt_section(s, {"k": (key.public_key(), {})})  # noqa: E731
    batch = [EntryMessage(payload=b"secret", sequence_id=i, key=f"k{i}") for i in range(2)]
    data = encode_entry(batch, producer_name="orig", codec=Codec.ZLIB, encrypt=encrypt)
    item = DeadLetter(40, 7, (1,), 1, "persistent://a/b/c")  # one index: the batch moves whole

    out = dead_letter_entry(data, item, Origin(TOPIC, 4, 3), "dlq-p", 1234)
    meta = read_metadata(out)
    assert stored_payload(out) == stored_payload(data) and meta.encryption is not None
    assert [m.properties["ORIGIN_MESSAGE_ID"] for m in meta.messages] == ["4:7:3:0", "4:7:3:1"]
    decrypt = lambda e, s: _e2e.decrypt_section(e, s, lambda n, m: key)  # noqa: E731
    assert [m.payload for m in decode_entry(out, decrypt=decrypt).messages] == [b"secret"] * 2
