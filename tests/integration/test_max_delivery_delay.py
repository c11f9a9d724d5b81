"""A namespace's maxDeliveryDelayInMillis refuses entries delayed beyond it (Pulsar's rule)."""

from __future__ import annotations

import uuid

import pytest

from magnetar_core.domain.errors import NotAllowedError
from magnetar_local.tenancy import ensure_namespaces
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

pytestmark = pytest.mark.emulator


def _delayed_entry(deliver_at_ms: int) -> bytes:
    message = EntryMessage(
        payload=b"later", sequence_id=0, publish_time_ms=1, deliver_at_ms=deliver_at_ms
    )
    return encode_entry([message], producer_name="p")


def test_an_entry_delayed_beyond_the_namespace_maximum_is_refused_and_nothing_is_stored(engine):
    namespace = f"public/maxdelay-{uuid.uuid4().hex[:8]}"
    tenant, local = namespace.split("/")
    ensure_namespaces(engine, namespace)
    engine.namespaces.set_delayed_delivery(
        tenant, local, {"active": True, "tickTime": 1000, "maxDeliveryDelayInMillis": 10_000}
    )
    topic = TopicName.parse(f"persistent://{namespace}/t")
    now = engine.runtime.now_ms()

    with pytest.raises(NotAllowedError, match="maxDeliveryDelayInMillis of 10000 ms"):
        engine.producer.publish(topic, _delayed_entry(now + 60_000))
    accepted = engine.producer.publish(topic, _delayed_entry(now + 5_000))

    assert accepted.entry_id == 0  # the refused entry took no id


def test_without_a_maximum_any_delay_is_accepted(engine, topic):
    far = engine.runtime.now_ms() + 365 * 24 * 3600 * 1000
    assert engine.producer.publish(topic, _delayed_entry(far)).entry_id == 0
