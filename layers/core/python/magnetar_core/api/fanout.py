"""The trigger fan-out function's edge: the log table's DynamoDB Stream -> trigger delivery.

The event source mapping (template.yaml, ``TriggerFanoutFunction``) hands over batches of the
log table's INSERT records (KEYS_ONLY). The answer is ReportBatchItemFailures'
``{"batchItemFailures": [{"itemIdentifier": "<SequenceNumber>"}]}``: the records of the topics
that failed or ran out of time (``services.triggers.fanout``); Lambda retries the batch from
the lowest of them, the records before it are done. Records that wake nothing (not an INSERT,
not a log key) are logged and never retried.

The same batch first wakes the notification channel's watchers of its partitions
(``services.notify``: one Query per partition, a post per watch; issue 16).

The trigger wake workflow (``infra/statemachines/trigger-wake.asl.json``) invokes the same
function with ``{"wake": {"topics": [...]}}`` when work is due without a commit (a retry
after its backoff, a batching window's end, a new trigger's backlog). A wake that fails or
runs out of time raises ``WakeFailed``: the workflow's Retry invokes it again. A malformed
wake event raises ValueError (the workflow gives up on it: no retry could change it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from magnetar_core.api import metrics
from magnetar_core.api.http import container_engine, logger
from magnetar_core.domain.notify import committed_partitions
from magnetar_core.domain.triggers.stream import Commits, committed_topics
from magnetar_core.domain.triggers.wakes import woken_topics
from magnetar_core.engine import Engine
from magnetar_core.services.triggers.fanout import FanOutResult


class WakeFailed(Exception):
    """A wake's topics could not all be run (named in the message): retried by the wake
    workflow."""


def lambda_handler(engine: Callable[[], Engine] | None = None) -> Callable[[Any, Any], dict]:
    """The fan-out Lambda entry point on ``engine()`` (the handler module's
    ``container_engine()``; None: one of its own). Never raises for a topic's failure: its
    records come back in ``batchItemFailures``."""
    engine = engine or container_engine()

    @logger.inject_lambda_context
    @metrics.invocation_measured("trigger_fanout")
    def handle(event: Any, context: Any) -> dict:
        topics = woken_topics(event)  # ValueError: a malformed wake
        if topics is not None:
            commits = Commits(topics={topic: [] for topic in topics})
        else:
            commits = committed_topics(event)
            _notify(engine, event)
        for sequence, why in commits.skipped:
            logger.warning("stream record %s skipped: %s", sequence, why)
        result = engine().fanout.run(commits, context.get_remaining_time_in_millis)
        _log(result)
        if topics is not None:
            if result.failed_topics:
                raise WakeFailed(f"triggers of {', '.join(result.failed_topics)} not run")
            return {"woken": topics}
        return {"batchItemFailures": [{"itemIdentifier": s} for s in result.failed]}

    return handle


def _notify(engine: Callable[[], Engine], event: Any) -> None:
    """Post the notification channel's notices for the partitions the batch committed to
    (issue 16), before any trigger step; a failure is logged, not retried (the watching
    consumers look again at their next keepalive, within 10 minutes)."""
    notify = engine().notify
    if not notify.enabled:
        return
    try:
        result = notify.notify(committed_partitions(event))
    except Exception:
        logger.exception("channel notices of this batch failed")
        return
    if result.posted or result.gone:
        logger.info("%d notices posted, %d connections gone", result.posted, len(result.gone))


def _log(result: FanOutResult) -> None:
    for topic, outcome in result.outcomes.items():
        logger.info(
            "woke %s: %d delivered, %d acknowledged, %d retried, %d filtered; next wake %s",
            topic,
            outcome.delivered,
            outcome.acknowledged,
            outcome.retried,
            outcome.filtered,
            result.woken_at.get(topic),
        )
