"""The grant tests' tools on a memory engine (tests/unit/test_grants.py,
test_grants_key_shared.py, test_rounds.py): one topic, its messages, a consumer's
one-message receives and acks, the subscription's cursor."""

from __future__ import annotations

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.cursor.state import SHARED, CursorState
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry, format_message_id
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/grants")


def memory_engine() -> Engine:
    engine = Engine.assemble(memory_settings(), memory_stores())
    engine.tenants.initialize_cluster()
    return engine


def produce(engine: Engine, entries: int) -> None:
    for i in range(entries):
        message = EntryMessage(payload=b"m%d" % i, sequence_id=i, publish_time_ms=1)
        engine.producer.publish(TOPIC, encode_entry([message], producer_name="p"))


def subscribe(engine: Engine, name: str | None = None) -> str:
    return engine.subscriptions.subscribe(TOPIC, "s", name, SHARED, earliest=True).consumer_id


def receive_one(engine: Engine, consumer: str) -> list[int]:
    return [d.entry_id for d in engine.subscriptions.receive(TOPIC, "s", consumer, 1, 0)]


def ledger(engine: Engine) -> int:
    """The topic's ledger (its id is the clock's: never reused by a topic created again)."""
    return engine.topics.resolve(TOPIC, create=False).ledger_id


def ack(engine: Engine, consumer: str, *entry_ids: int) -> None:
    ids = [format_message_id(ledger(engine), e, -1, -1) for e in entry_ids]
    engine.subscriptions.acknowledge(TOPIC, "s", consumer, ids, False)


def cursor(engine: Engine) -> CursorState:
    ref = engine.topics.resolve(TOPIC, create=False)
    state = engine.subscriptions.context.cursors.get(ref.key, "s")
    assert state is not None
    return state
