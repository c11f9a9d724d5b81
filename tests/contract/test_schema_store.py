"""Contract of the schema store: a topic's versions read back in version order (also past
nine, where text order would differ), each version written once, topics apart, and never
listed as topics."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.schemas.data import SchemaData, SchemaVersion
from magnetar_wire.names import TopicName


def test_versions_are_written_once_and_read_back_in_order_per_topic(stores, uid):
    topic = TopicName.parse(f"persistent://c/ns-{uid}/users")
    other = TopicName.parse(f"persistent://c/ns-{uid}/users-2")
    schemas = stores.schemas
    assert schemas.versions(topic) == []
    written = [SchemaVersion(v, SchemaData("AVRO", f'"v{v}"', {"p": str(v)}, 1000 + v))
               for v in range(11)]  # fmt: skip
    for version in reversed(written):
        schemas.add(topic, version)
    tomb = SchemaVersion(11, SchemaData("AVRO", "", {}, 2000, deleted=True))
    schemas.add(topic, tomb)
    schemas.add(other, written[0])
    assert schemas.versions(topic) == [*written, tomb]
    assert schemas.versions(other) == [written[0]]
    with pytest.raises(ConditionFailed):
        schemas.add(topic, SchemaVersion(3, SchemaData("STRING", "")))
    assert schemas.versions(topic)[3] == written[3]
    assert stores.topics.list(f"persistent://c/ns-{uid}") == []
