"""A topic's schema registry, as Pulsar's ``SchemasResource``: versions 0, 1, 2... per topic
(partitions share their partitioned topic's; ``persistent://`` and ``non-persistent://``
share one, as Pulsar's schema id has no domain), each written once. Posting a schema equal
to a live one (type and definition) answers that one's version and stores nothing; a new
one must pass the namespace's strategy (``domain.schemas.compatibility``) against the live
versions, else IncompatibleSchema (409) and nothing is stored. DELETE stores a tombstone
version: the versions before it are no longer live, and the next schema is checked against
none. Declared by producers and consumers at creation through ``declare``.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.domain.errors import (
    IncompatibleSchema,
    NotAcceptable,
    NotFound,
    ServiceUnitNotReady,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.schemas.compatibility import incompatibility
from magnetar_core.domain.schemas.data import NO_SCHEMA, SchemaData, SchemaVersion, parse_payload
from magnetar_core.ports import SchemaStore
from magnetar_core.services import optimistic
from magnetar_core.services.schemas.policies import SchemaPolicies
from magnetar_wire.names import TopicName

Change = Callable[[list[SchemaVersion]], tuple[int, SchemaVersion | None]]
"""An optimistic change of a topic's versions: (the version to answer, the one to add)."""


def schema_id(topic: TopicName) -> TopicName:
    """The name a topic's schemas are kept under: its persistent, non-partition name."""
    base = topic.base
    return TopicName.of("persistent", base.tenant, base.namespace, base.local)


def live(versions: list[SchemaVersion]) -> list[SchemaVersion]:
    """The versions after the last tombstone (Pulsar's trimDeletedSchemaAndGetList)."""
    tombstones = [i for i, v in enumerate(versions) if v.schema.deleted]
    return versions[tombstones[-1] + 1 :] if tombstones else versions


class Schemas:
    """The registry's use cases; each raises InvalidTopicName for a bad name and
    ServiceUnitNotReady when ``attempts`` concurrent writers kept winning."""

    def __init__(self, store: SchemaStore, policies: SchemaPolicies, runtime: Runtime,
                 attempts: int) -> None:  # fmt: skip
        self._store = store
        self._policies = policies
        self._rt = runtime
        self._attempts = attempts

    def _live(self, topic: TopicName) -> list[SchemaVersion]:
        return live(self._store.versions(schema_id(topic)))

    def latest(self, topic: TopicName) -> SchemaVersion:
        """The newest version; raises NotFound ("Schema not found", or "Schema is deleted"
        after DELETE)."""
        versions = self._store.versions(schema_id(topic))
        if not versions:
            raise NotFound(f"Schema not found: {topic} has no schema")
        if versions[-1].schema.deleted:
            raise NotFound(f"Schema is deleted: {topic}'s schema was deleted")
        return versions[-1]

    def get(self, topic: TopicName, version: int) -> SchemaVersion:
        """Version ``version``; raises NotFound (no such version, or a tombstone)."""
        for stored in self._store.versions(schema_id(topic)):
            if stored.version == version and not stored.schema.deleted:
                return stored
        raise NotFound(f"Schema not found: {topic} has no schema version {version}")

    def all(self, topic: TopicName) -> list[SchemaVersion]:
        """The live versions, oldest first ([] when there are none)."""
        return self._live(topic)

    def post(self, topic: TopicName, body: object) -> int:
        """Register the PostSchemaPayload ``body`` under the namespace's strategy; returns
        its version (an equal live one's, if any). Raises InvalidMessage, InvalidSchemaData,
        NotAcceptable (406: BYTES, the default), IncompatibleSchema (409), NotFound (no
        such namespace)."""
        schema = parse_payload(body, int(self._rt.now_ms()))
        if schema.schema_type == "BYTES":
            raise NotAcceptable("Do not upload a BYTES schema, because it's the default schema type")  # fmt: skip
        return self._register(topic, schema, self._policies.applied_strategy(topic))

    def _register(self, topic: TopicName, schema: SchemaData, strategy: str) -> int:
        sid = schema_id(topic)

        def change(versions: list[SchemaVersion]) -> tuple[int, SchemaVersion | None]:
            current = live(versions)
            same = next((v for v in current if v.schema.same_as(schema)), None)
            if same is not None:
                return same.version, None
            why = incompatibility(strategy, [v.schema for v in current], schema)
            if why:
                raise IncompatibleSchema(f"Incompatible schema for {topic}: {why}")
            new = SchemaVersion(len(versions), schema)
            return new.version, new

        return self._write(sid, change)

    def _write(self, sid: TopicName, change: Change) -> int:
        outcome = optimistic.update(lambda: self._store.versions(sid), change,
                                    lambda v: self._store.add(sid, v), self._rt,
                                    self._attempts)  # fmt: skip
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"The schema of {sid} is changing concurrently: retry")
        return int(outcome)

    def delete(self, topic: TopicName) -> int:
        """Store a tombstone; returns its version. Raises NotFound (no live schema)."""
        sid = schema_id(topic)

        def change(versions: list[SchemaVersion]) -> tuple[int, SchemaVersion | None]:
            if not live(versions):
                raise NotFound(f"Schema not found: {topic} has no schema to delete")
            last = versions[-1].schema
            tomb = SchemaData(last.schema_type, "", {}, int(self._rt.now_ms()), deleted=True)
            return len(versions), SchemaVersion(len(versions), tomb)

        return self._write(sid, change)

    def test(self, topic: TopicName, body: object) -> tuple[bool, str]:
        """Whether ``body`` would be accepted, and the strategy that applies; stores
        nothing. Raises InvalidMessage, InvalidSchemaData, NotFound (no such namespace)."""
        schema = parse_payload(body, int(self._rt.now_ms()))
        strategy = self._policies.applied_strategy(topic)
        current = [v.schema for v in self._live(topic)]
        if any(s.same_as(schema) for s in current):
            return True, strategy
        return incompatibility(strategy, current, schema) is None, strategy

    def version_of(self, topic: TopicName, body: object) -> int:
        """The live version equal to ``body``; raises NotFound when there is none."""
        schema = parse_payload(body, 0)
        for stored in self._live(topic):
            if stored.schema.same_as(schema):
                return stored.version
        raise NotFound(f"Not found schema: {topic} has no version of this schema")

    def declare(self, topic: TopicName, body: object | None, *, producer: bool,
                dry_run: bool = False) -> int | None:  # fmt: skip
        """The schema a producer (``producer``) or consumer declares at creation (a
        SchemaInfo dict, None: none): its version when stored. A new one is registered
        (under the strategy) by a producer if ``isAllowAutoUpdateSchema``, by a consumer
        only on a topic without a schema; otherwise a consumer's is checked against the
        strategy and not stored (None). None for BYTES/NONE or no schema, unless a producer
        meets ``schemaValidationEnforced`` on a topic that has a schema. ``dry_run``: every
        check, nothing stored (handlers run it before creating the producer or consumer, so
        a refused creation stores nothing). Raises IncompatibleSchema (refused: nothing is
        stored), InvalidMessage, InvalidSchemaData."""
        schema = None if body is None else parse_payload(body, int(self._rt.now_ms()))
        if (schema is None or schema.schema_type in NO_SCHEMA) and not producer:
            return None  # a consumer without a schema: nothing to read
        current = self._live(topic)  # a topic without a schema accepts anything: one Query
        if schema is None or schema.schema_type in NO_SCHEMA:
            if current and self._policies.applied(topic).validation_enforced:
                raise IncompatibleSchema(f"Producers to {topic} must declare its schema: schemaValidationEnforced is on")  # fmt: skip
            return None
        same = next((v for v in current if v.schema.same_as(schema)), None)
        if same is not None:
            return same.version
        policies = self._policies.applied(topic)
        if current and not producer:  # a consumer reads: checked, never stored
            why = incompatibility(policies.strategy, [v.schema for v in current], schema)
            if why:
                raise IncompatibleSchema(f"Incompatible schema for a consumer of {topic}: {why}")
            return None
        if current and not policies.auto_update:
            raise IncompatibleSchema(f"The schema is not registered on {topic} and isAllowAutoUpdateSchema is off: register it with POST /admin/v2/schemas/.../schema")  # fmt: skip
        if dry_run:
            why = incompatibility(policies.strategy, [v.schema for v in current], schema)
            if why:
                raise IncompatibleSchema(f"Incompatible schema for {topic}: {why}")
            return None
        return self._register(topic, schema, policies.strategy)
