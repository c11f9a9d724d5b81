"""Message ids are never reused: a topic's ledger comes from an epoch-ms based source that
never repeats (``LedgerIds``), so a topic created again, or created again by a service that
restarted without its state, names its messages anew, and the SDK's duplicate guard (which
keys on the whole id, ledger included) never takes a new message for an acknowledged one."""

from __future__ import annotations

from magnetar._consumer.acks.held import AckedIds
from magnetar.message import MessageId
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.runtime import LedgerIds, Runtime
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.ids import format_message_id, parse_message_id
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/ledgers")


def engine_at(clock: list[int]) -> Engine:
    """A fresh engine on empty stores (a service started with none of its state)."""
    runtime = Runtime(now_ms=lambda: clock[0], new_ledger_id=LedgerIds(lambda: clock[0]))
    engine = Engine.assemble(memory_settings(), memory_stores(), runtime)
    engine.tenants.initialize_cluster()
    return engine


def entry() -> bytes:
    return encode_entry([EntryMessage(payload=b"m", sequence_id=0)], producer_name="p")


def test_ledger_ids_follow_the_clock_and_never_repeat_even_when_it_stands_or_steps_back():
    clock = [1_764_300_000_000]
    ids = LedgerIds(lambda: clock[0])
    first, same_ms = ids(), ids()
    clock[0] -= 5_000  # the clock stepped back
    back = ids()
    clock[0] += 60_000
    later = ids()
    assert first == 1_764_300_000_000_000 and same_ms == first + 1 and back == first + 2
    assert later == clock[0] * 1000


def test_a_topic_deleted_and_created_again_gets_a_later_ledger():
    engine = engine_at([1_764_300_000_000])
    first = engine.topics.create(TOPIC, 0).ledger_id
    engine.topics.delete(TOPIC, partitioned=False, force=True)
    again = engine.topics.create(TOPIC, 0).ledger_id
    assert again > first


def test_a_restarted_service_without_its_state_never_names_a_message_as_before():
    clock = [1_764_300_000_000]
    before = engine_at(clock).producer.publish(TOPIC, entry())
    clock[0] += 4_000  # a restart takes seconds
    after = engine_at(clock).producer.publish(TOPIC, entry())
    assert after.entry_id == before.entry_id == 0
    assert after.message_ids != before.message_ids and after.ledger_id > before.ledger_id


def test_epoch_ledger_ids_round_trip_and_old_short_ids_still_parse():
    ledger = 1_764_300_000_000_123
    assert parse_message_id(format_message_id(ledger, 7, 2, 3)) == (ledger, 7, 2, 3)
    assert parse_message_id("1:0") == (1, 0, -1, -1)
    assert MessageId.deserialize(f"{ledger}:7:-1:-1".encode()).ledger_id() == ledger


def test_the_duplicate_guard_never_takes_a_new_ledgers_message_for_an_acknowledged_one():
    sub, old, new = object(), 1_764_300_000_000_000, 1_764_300_004_000_000
    acked = AckedIds()
    acked.add(sub, MessageId(-1, old, 0, -1))
    acked.add_cumulative(sub, MessageId(-1, old, 9, -1))
    assert (sub, MessageId(-1, old, 0, -1)) in acked and (sub, MessageId(-1, old, 5, -1)) in acked
    assert (sub, MessageId(-1, new, 0, -1)) not in acked  # the same entry id, a new ledger
    assert (sub, MessageId(-1, new, 9, -1)) not in acked
