"""The trigger fan-out function's edge: the log table's DynamoDB Stream -> trigger delivery.

The event source mapping (template.yaml, ``TriggerFanoutFunction``) hands over batches of the
log table's INSERT records (KEYS_ONLY). The answer is ReportBatchItemFailures'
``{"batchItemFailures": [{"itemIdentifier": "<SequenceNumber>"}]}``: the records of the topics
that failed or ran out of time (``services.triggers.fanout``); Lambda retries the batch from
the lowest of them, the records before it are done. Records that wake nothing (not an INSERT,
not a log key) are logged and never retried.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from magnetar_core.api.http import container_engine, logger
from magnetar_core.domain.triggers.stream import committed_topics
from magnetar_core.engine import Engine


def lambda_handler(engine: Callable[[], Engine] | None = None) -> Callable[[Any, Any], dict]:
    """The fan-out Lambda entry point on ``engine()`` (the handler module's
    ``container_engine()``; None: one of its own). Never raises for a topic's failure: its
    records come back in ``batchItemFailures``."""
    engine = engine or container_engine()

    @logger.inject_lambda_context
    def handle(event: Any, context: Any) -> dict:
        commits = committed_topics(event)
        for sequence, why in commits.skipped:
            logger.warning("stream record %s skipped: %s", sequence, why)
        result = engine().fanout.run(commits, context.get_remaining_time_in_millis)
        for topic, outcome in result.outcomes.items():
            logger.info(
                "woke %s: %d delivered, %d acknowledged, %d retried, %d filtered",
                topic,
                outcome.delivered,
                outcome.acknowledged,
                outcome.retried,
                outcome.filtered,
            )
        return {"batchItemFailures": [{"itemIdentifier": s} for s in result.failed]}

    return handle
