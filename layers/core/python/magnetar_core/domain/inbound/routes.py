"""Inbound routes, pure: which topic a source event goes to, with which key and properties.

A route is configured per source (``INGEST_ROUTES``, a JSON list; docs/architecture/inbound.md)::

    {"source": "s3", "name": "my-bucket", "topic": "persistent://public/default/uploads",
     "key": "key", "properties": ["bucket", "key", "size"]}

``source`` is one of ``s3``, ``sns``, ``eventbridge``, ``schedule``; ``name`` (optional)
matches the source's bucket, SNS topic ARN, EventBridge ``source`` or schedule ARN exactly
(absent: any); ``key`` names the field whose value becomes the message key (absent, or the
field missing from the event: the source event id); ``properties`` names the fields copied
into the message's properties (absent: every field). The first matching route wins.

Each message also carries ``ingest.source`` (the kind) and ``ingest.eventId`` (the source
event id), is published by one producer per source (``producer_name``) and is committed
once per event (``once_key``: the commit path's once marker, so a redelivery is stored no
second time).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.inbound.events import KINDS, SourceEvent
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName

SOURCE_PROPERTY = "ingest.source"
EVENT_ID_PROPERTY = "ingest.eventId"
_ROUTE_FIELDS = {"source", "name", "topic", "key", "properties"}


class InvalidRoutes(ValueError):
    """The route configuration is malformed (a deployment error: the message says where)."""


@dataclass(frozen=True)
class InboundMessage:
    """What one source event becomes: a message for ``topic`` from its source's producer,
    committed at most once per ``once_key``."""

    topic: TopicName
    key: str
    properties: Mapping[str, str]
    payload: bytes
    event_time_ms: int
    producer_name: str
    once_key: str


@dataclass(frozen=True)
class Route:
    """Events of ``kind`` (from the source ``name``, or any when None) go to ``topic``, keyed
    by the field ``key`` (None: the event id), with the fields ``properties`` (None: all)."""

    kind: str
    topic: TopicName
    name: str | None = None
    key: str | None = None
    properties: tuple[str, ...] | None = None

    def matches(self, event: SourceEvent) -> bool:
        return event.kind == self.kind and self.name in (None, event.name)

    def message(self, event: SourceEvent) -> InboundMessage:
        """The message ``event`` becomes on this route (fields it lacks are left out)."""
        key = event.fields.get(self.key) if self.key is not None else None
        names = self.properties if self.properties is not None else tuple(event.fields)
        properties = {n: event.fields[n] for n in names if n in event.fields}
        properties[SOURCE_PROPERTY] = event.kind
        properties[EVENT_ID_PROPERTY] = event.event_id
        return InboundMessage(
            topic=self.topic,
            key=key or event.event_id,
            properties=properties,
            payload=event.payload,
            event_time_ms=event.time_ms,
            producer_name=producer_name(event),
            once_key=once_key(event),
        )


def producer_name(event: SourceEvent) -> str:
    """The producer of the event's source: ``ingest-<kind>-<source name>`` (a bucket, an
    SNS topic ARN, an EventBridge source, a schedule ARN)."""
    return f"ingest-{event.kind}-{event.name}"


def once_key(event: SourceEvent) -> str:
    """What the event is committed once by: ``<kind>-<32 hex of its id's SHA-256>`` (a
    bounded length whatever the id), the same on every redelivery and for an S3 upload
    notified directly and through EventBridge."""
    digest = hashlib.sha256(event.event_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{event.kind}-{digest[:32]}"


def route_for(routes: Sequence[Route], event: SourceEvent) -> Route:
    """The first route that takes ``event``; raises InvalidMessage naming the event's source."""
    for route in routes:
        if route.matches(event):
            return route
    raise InvalidMessage(
        f"No inbound route takes {event.kind} events from {event.name!r} (event "
        f"{event.event_id!r}); add one to INGEST_ROUTES"
    )


def routes_from_json(text: str) -> tuple[Route, ...]:
    """Routes from ``INGEST_ROUTES`` text (empty: none); raises InvalidRoutes."""
    if not text.strip():
        return ()
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise InvalidRoutes(f"INGEST_ROUTES is not JSON: {exc}") from exc
    return parse_routes(config)


def parse_routes(config: Any) -> tuple[Route, ...]:
    """Routes from their JSON form (a list of objects); raises InvalidRoutes naming the
    route and the field that is wrong."""
    if not isinstance(config, list):
        raise InvalidRoutes("INGEST_ROUTES must be a JSON list of route objects")
    return tuple(_route(i, raw) for i, raw in enumerate(config))


def _route(index: int, raw: Any) -> Route:
    where = f"INGEST_ROUTES[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidRoutes(f"{where} must be an object")
    unknown = sorted(set(raw) - _ROUTE_FIELDS)
    if unknown:
        raise InvalidRoutes(f"{where}: unknown fields {unknown}; allowed {sorted(_ROUTE_FIELDS)}")
    kind = raw.get("source")
    if kind not in KINDS:
        raise InvalidRoutes(f"{where}.source must be one of {list(KINDS)}, not {kind!r}")
    text = raw.get("topic")
    if not isinstance(text, str):
        raise InvalidRoutes(f"{where}.topic must be a topic name")
    try:
        topic = TopicName.parse(text)
    except InvalidTopicName as exc:
        raise InvalidRoutes(f"{where}.topic: {exc}") from exc
    name, key = raw.get("name"), raw.get("key")
    for field, value in (("name", name), ("key", key)):
        if value is not None and (not isinstance(value, str) or not value):
            raise InvalidRoutes(f"{where}.{field} must be a non-empty string when given")
    properties = raw.get("properties")
    if properties is not None and not (
        isinstance(properties, list) and all(isinstance(p, str) and p for p in properties)
    ):
        raise InvalidRoutes(f"{where}.properties must be a list of field names when given")
    return Route(kind, topic, name, key, tuple(properties) if properties is not None else None)
