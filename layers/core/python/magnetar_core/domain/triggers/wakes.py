"""Trigger wakes, pure: when a topic's triggers must run again without a produce, and the
wake workflow's execution name, input and event (issue 13, "redeliveries due later are woken
by the timer workflow").

A commit wakes a topic's triggers through the log table's stream. Work that becomes due
later without a commit (a retry after its backoff, released in the cursor by its delay
timer; the end of a batching window) and a new trigger's backlog are woken by the *wake
workflow* (``infra/statemachines/trigger-wake.asl.json``): one Step Functions execution per
(topic, second) waits until ``dueAt``, then invokes the fan-out function with
``{"wake": {"topics": [topic]}}``.

Wakes are whole seconds (the Wait state's grain) and come ``WAKE_MARGIN_MS`` after the work
is due, so the delay timer that releases a retry in the same second has run first. Work
already due (a retry due at once, or one its timer has not released yet) is woken again
``RECHECK_MS`` later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from magnetar_core.domain.timers import SECOND_MS, iso_utc
from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName

WAKE_MARGIN_MS = 1000
"""A wake comes this long after the work is due (ms): the delay timer of a retry due in
the same second releases it first."""
RECHECK_MS = 2000
"""Work already due but not yet deliverable (a retry its timer has not released) is woken
again this much later (ms)."""


def wake_at_ms(due_ms: int | None, retried: bool, now_ms: int) -> int | None:
    """When to wake a topic whose last steps said work is due at ``due_ms`` (epoch ms; None:
    nothing dated) and ``retried`` (messages were sent back for a retry); None: not before
    the next commit. Always a whole second, later than ``now_ms``."""
    if due_ms is None and not retried:
        return None
    at_ms = now_ms + RECHECK_MS if due_ms is None or due_ms <= now_ms else due_ms + WAKE_MARGIN_MS
    return -(-at_ms // SECOND_MS) * SECOND_MS


def soonest_wake_ms(now_ms: int) -> int:
    """The soonest wake (a new trigger's backlog): the next whole second after ``now_ms``."""
    return (now_ms // SECOND_MS + 1) * SECOND_MS


def wake_execution_name(topic: str, at_ms: int) -> str:
    """The deterministic execution name of ``topic``'s wake at ``at_ms`` (<= 80 characters
    of letters, digits and ``-``): a second start for the same second is refused as
    already existing, so steps that see the same due work start one wake."""
    digest = hashlib.sha256(topic.encode()).hexdigest()[:40]
    return f"w{at_ms // SECOND_MS}-{digest}"


def wake_execution_input(topic: str, at_ms: int) -> str:
    """The wake workflow's input: the topics to wake and ``dueAt`` (ISO-8601 UTC, ``Z``)."""
    return json.dumps({"topics": [topic], "dueAt": iso_utc(at_ms)}, separators=(",", ":"))


def woken_topics(event: Any) -> list[str] | None:
    """The base topics (full names, once each, in order) of a wake event (``{"wake":
    {"topics": [...]}}``, what the workflow sends the fan-out function), or None when
    ``event`` is no wake event (a stream batch). Raises ValueError for a wake event whose
    topics are not a list of topic names (no retry could change it)."""
    if not isinstance(event, Mapping) or "wake" not in event:
        return None
    wake = event["wake"]
    topics = wake.get("topics") if isinstance(wake, Mapping) else None
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise ValueError(f"a wake event needs {{'wake': {{'topics': [str, ...]}}}}, not {wake!r}")
    try:
        return list(dict.fromkeys(str(TopicName.parse(t).base) for t in topics))
    except InvalidTopicName as error:
        raise ValueError(f"a wake event names a bad topic: {error}") from error
