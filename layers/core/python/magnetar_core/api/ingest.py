"""The ingest function's edge: S3, SNS, EventBridge and Scheduler events into topics.

These sources invoke Lambda asynchronously and read no answer, so the only signal back is
failure: a bad event, an event no route takes, or a storage fault is logged (the event's
source, its id and the error) and *raised*, and the platform retries the invocation (Lambda's
asynchronous retries, then the function's on-failure destination / dead letter queue; see
docs/architecture/inbound.md). A retry stores nothing twice (``services.ingest``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from magnetar_core.api import metrics
from magnetar_core.api.http import container_engine, logger
from magnetar_core.domain.errors import MagnetarError
from magnetar_core.engine import Engine


def lambda_handler(engine: Callable[[], Engine] | None = None) -> Callable[[Any, Any], dict]:
    """The ingest Lambda entry point on ``engine()`` (the handler module's
    ``container_engine()``; None: one of its own). It answers ``{"ingested": [{"eventId",
    "topic", "messageId", "duplicate"}]}`` and raises what ``Ingest.handle`` raises, after
    logging it."""
    engine = engine or container_engine()

    @logger.inject_lambda_context
    @metrics.invocation_measured("ingest")
    def handle(event: Any, context: Any) -> dict:
        try:
            done = engine().ingest.handle(event)
        except MagnetarError as exc:
            logger.exception(
                "inbound event refused, nothing of it stored: %s: %s (%s)",
                exc.code,
                exc.message,
                _shape(event),
            )
            raise
        except Exception:
            logger.exception("inbound event failed (%s); the platform retries it", _shape(event))
            raise
        for item in done:
            logger.info(
                "inbound event %s -> %s %s%s",
                item.event_id,
                item.topic,
                item.message_id,
                " (duplicate: stored before)" if item.duplicate else "",
            )
        return {
            "ingested": [
                {
                    "eventId": i.event_id,
                    "topic": i.topic,
                    "messageId": i.message_id,
                    "duplicate": i.duplicate,
                }
                for i in done
            ]
        }

    return handle


def _shape(event: Any) -> str:
    """A short description of an event for the log (its top-level keys, not its content)."""
    if isinstance(event, dict):
        return f"event keys {sorted(event)[:12]}"
    return f"event of type {type(event).__name__}"
