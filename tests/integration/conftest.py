"""Engine fixtures on the embedded emulator: a fresh topic per test, engines like containers."""

from __future__ import annotations

import uuid

import pytest

from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_wire.names import TopicName


@pytest.fixture(scope="session")
def settings(local_stack) -> Settings:
    return Settings.from_env(local_stack.environment)


@pytest.fixture
def new_engine(settings, engine_clients):
    """A factory of engines: each is like one Lambda container (own caches; the boto3
    clients are the session's, as building them costs ~50-100 ms each)."""
    return lambda: Engine.build(settings, clients=engine_clients)


@pytest.fixture
def engine(new_engine) -> Engine:
    return new_engine()


@pytest.fixture
def topic() -> TopicName:
    return TopicName.parse(f"persistent://public/default/it-{uuid.uuid4().hex[:10]}")


@pytest.fixture
def make_entry():
    """Build an entry holding the given payloads (batched when more than one)."""
    from magnetar_wire import EntryMessage, encode_entry

    def build(*payloads: bytes, producer: str = "it-producer", key: str | None = None) -> bytes:
        messages = [
            EntryMessage(payload=p, sequence_id=i, publish_time_ms=1_700_000_000_000 + i, key=key)
            for i, p in enumerate(payloads)
        ]
        return encode_entry(messages, producer_name=producer)

    return build
