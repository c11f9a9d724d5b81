"""Inbound sources (issue 13): S3, EventBridge, SNS and Scheduler events published to topics.

One invocation's events are all read and routed first, so a bad event (or one no route
takes) raises before anything is stored; then each becomes one entry with one message from
its source's producer (``domain.inbound.routes.producer_name``, sequence id 0), committed
together with a marker of the event (``Producer.publish(once=...)``: one DynamoDB
transaction, the marker kept for the sources' redelivery window by TTL). A redelivered
event (the platform retries a failed invocation, SNS and EventBridge deliver at least once)
finds its marker, is answered as a duplicate and stored once; the namespace's
deduplication plays no part. docs/architecture/inbound.md, says why this path
and what it costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.inbound.events import S3, read_events
from magnetar_core.domain.inbound.routes import (
    EVENT_ID_PROPERTY,
    InboundMessage,
    Route,
    route_for,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.services.produce import Once, Producer
from magnetar_wire import EntryFormatError, EntryMessage, encode_entry

SEQUENCE_ID = 0
"""The sequence id of every inbound message (deduplication is by once marker, not by it)."""

REDELIVERY_WINDOW_S = 48 * 3600
"""How long an event's once marker is kept: beyond the sources' redelivery windows (Lambda's
asynchronous retries, 6 h in template.yaml; EventBridge's retries, 24 h)."""


@dataclass(frozen=True)
class Ingested:
    """One source event's outcome: where it went, its message id, and whether it was a
    redelivery of an event stored before (``duplicate``: nothing new was stored)."""

    event_id: str
    topic: str
    message_id: str
    duplicate: bool


class Ingest:
    """Turns inbound AWS events into messages on the topics their routes name."""

    def __init__(
        self,
        producer: Producer,
        routes: Sequence[Route],
        runtime: Runtime,
        entries_bucket: str | None = None,
        redelivery_window_s: int = REDELIVERY_WINDOW_S,
    ) -> None:
        """``entries_bucket``: the bucket entries are stored in, whose own ObjectCreated
        events are refused (each would store an entry there: a loop without end).
        ``redelivery_window_s``: how long a redelivery is recognised as one (seconds)."""
        self._producer = producer
        self._routes = tuple(routes)
        self._rt = runtime
        self._entries_bucket = entries_bucket
        self._window_s = redelivery_window_s

    def handle(self, event: Any) -> list[Ingested]:
        """Publish every source event in ``event`` (one Lambda invocation's), each once.

        Raises InvalidMessage (a malformed event, an S3 event of the entries bucket, or no
        route takes one of its events: then nothing is stored) and whatever ``Producer.publish`` raises (MessageTooBig,
        NotAllowedError, ServiceUnitNotReady, StorageFault...; the events before it are
        stored, and a retry of the invocation stores them no second time).
        """
        events = read_events(event)
        for e in events:
            if e.kind == S3 and e.name == self._entries_bucket:
                raise InvalidMessage(
                    f"S3 event {e.event_id!r} comes from the entries bucket itself: publishing "
                    "it would store an entry there and loop; remove that bucket notification"
                )
        messages = [route_for(self._routes, e).message(e) for e in events]
        entries = [(m, self._entry(m)) for m in messages]
        return [self._publish(m, entry) for m, entry in entries]

    def _entry(self, message: InboundMessage) -> bytes:
        try:
            return encode_entry(
                [
                    EntryMessage(
                        payload=message.payload,
                        sequence_id=SEQUENCE_ID,
                        publish_time_ms=self._rt.now_ms(),
                        key=message.key,
                        properties=message.properties,
                        event_time_ms=message.event_time_ms,
                    )
                ],
                producer_name=message.producer_name,
            )
        except EntryFormatError as exc:
            raise InvalidMessage(
                f"Event {message.properties[EVENT_ID_PROPERTY]!r} makes no valid message: {exc}"
            ) from exc

    def _publish(self, message: InboundMessage, entry: bytes) -> Ingested:
        once = Once(message.once_key, self._rt.now_ms() // 1000 + self._window_s)
        result = self._producer.publish(message.topic, entry, once=once)
        return Ingested(
            event_id=message.properties[EVENT_ID_PROPERTY],
            topic=str(result.topic),
            message_id=result.message_ids[0],
            duplicate=result.duplicate,
        )
