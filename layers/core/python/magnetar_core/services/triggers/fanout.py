"""The stream fan-out (issue 13, "driven on AWS with zero idle cost"): a batch of the log
table's stream records wakes the triggers of the topics it committed to, and only those.

For each topic of the batch (``domain.triggers.stream.Commits``): one trigger lookup (one
Query; a topic without triggers costs nothing more), then each trigger's delivery steps
(``Delivery.deliver_once``) until a step makes no progress. Work due later without a produce
(a retry after its backoff, the end of a batching window) is not waited for here: the
topic's wake is scheduled through the ``TriggerWakes`` port (``domain.triggers.wakes``: the
wake workflow invokes the fan-out again then, with a wake event instead of stream records).

Failures are per topic: a topic whose lookup or step raised, or that was still progressing
when the Lambda's remaining time fell under ``step_reserve_ms``, or whose wake could not be
scheduled, is in ``FanOutResult.failed_topics`` and has its records' sequence numbers in
``FanOutResult.failed`` (the handler answers them as ``batchItemFailures``, so the
event source mapping retries from there; the other topics' records are not failed). A topic
that no longer exists (``TopicNotFound``) is not a failure: there is nothing to deliver.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from magnetar_core.domain.errors import TopicNotFound
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.stream import Commits
from magnetar_core.domain.triggers.wakes import soonest_wake_ms, wake_at_ms
from magnetar_core.ports import TriggerWakes
from magnetar_core.services.triggers import Triggers
from magnetar_core.services.triggers.delivery import Delivery, DeliveryOutcome
from magnetar_wire.names import TopicName

log = logging.getLogger(__name__)

STEP_RESERVE_MS = 65_000
"""Remaining Lambda time (ms) under which no step starts: a step may wait for its target up
to a webhook's 30 s timeout or a Lambda target's run (the function runner's 60 s)."""
MAX_STEPS = 1000
"""Steps of one trigger per wake (a bound, not a budget: a step moves at least one message).
A trigger still progressing after them has its topic's records retried, so the mapping
wakes the topic again (its other triggers are stepped first)."""


@dataclass
class FanOutResult:
    """What a batch did: per topic its delivery outcome (summed over its triggers' steps),
    the topics that failed, the sequence numbers of their records (``failed``: what to
    retry) and the wakes scheduled (``woken_at``: topic -> epoch ms)."""

    outcomes: dict[str, DeliveryOutcome] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    failed_topics: list[str] = field(default_factory=list)
    woken_at: dict[str, int] = field(default_factory=dict)


class OutOfTime(Exception):
    """The Lambda's remaining time ran under the step reserve with work left."""


class FanOut:
    """Runs the triggers of the topics a stream batch committed to (see the module);
    ``wakes`` None: nothing is scheduled (work due later waits for the next commit)."""

    def __init__(
        self,
        triggers: Triggers,
        delivery: Delivery,
        runtime: Runtime,
        wakes: TriggerWakes | None = None,
        step_reserve_ms: int = STEP_RESERVE_MS,
    ) -> None:
        self._triggers = triggers
        self._delivery = delivery
        self._runtime = runtime
        self._wakes = wakes
        self._reserve_ms = step_reserve_ms

    def run(self, commits: Commits, remaining_ms: Callable[[], int]) -> FanOutResult:
        """Wake each topic of ``commits`` in turn; ``remaining_ms()`` is the Lambda's time
        left (ms). Raises nothing: a topic's failure goes to ``failed`` (and is logged)."""
        result = FanOutResult()
        for topic, sequences in commits.topics.items():
            try:
                outcome, work_left = self._run_topic(TopicName.parse(topic), remaining_ms)
                result.outcomes[topic] = outcome
                if work_left:
                    self._continue(topic, sequences, result)
                else:
                    self._schedule(topic, outcome, result)
            except TopicNotFound:
                log.info("topic %s is gone: no trigger to run", topic)
            except OutOfTime:
                log.warning("out of time on %s: its records are retried", topic)
                result.failed_topics.append(topic)
                result.failed.extend(sequences)
            except Exception:
                log.exception("triggers of %s failed: its records are retried", topic)
                result.failed_topics.append(topic)
                result.failed.extend(sequences)
        return result

    def _schedule(self, topic: str, outcome: DeliveryOutcome, result: FanOutResult) -> None:
        """Schedule ``topic``'s wake for the work its steps said is due later (none: no
        wake). Raises what the port raises (the topic then counts as failed)."""
        at_ms = wake_at_ms(outcome.due_ms, outcome.retried > 0, self._runtime.now_ms())
        if at_ms is not None and self._wakes is not None:
            self._wakes.wake_at(topic, at_ms)
            result.woken_at[topic] = at_ms

    def _continue(self, topic: str, sequences: list[str], result: FanOutResult) -> None:
        """A trigger of ``topic`` took ``MAX_STEPS`` steps with work left (a backlog longer
        than one wake takes): wake the topic again at once, or, without wakes, answer its
        records as failures so the event source mapping runs it again. Raises what the
        port raises."""
        if self._wakes is not None:
            at_ms = soonest_wake_ms(self._runtime.now_ms())
            self._wakes.wake_at(topic, at_ms)
            result.woken_at[topic] = at_ms
            return
        log.info("%s still has work after %d steps: its records are retried", topic, MAX_STEPS)
        result.failed_topics.append(topic)
        result.failed.extend(sequences)

    def _run_topic(
        self, topic: TopicName, remaining_ms: Callable[[], int]
    ) -> tuple[DeliveryOutcome, bool]:
        """Step each trigger of ``topic`` until no progress (at most ``MAX_STEPS`` steps
        each); returns the summed outcome and whether a trigger was still progressing at its
        last step. Raises OutOfTime, TopicNotFound, or what a step raises."""
        total, work_left = DeliveryOutcome(), False
        for trigger in self._triggers.of_topic(topic):
            for _ in range(MAX_STEPS):
                if remaining_ms() < self._reserve_ms:
                    raise OutOfTime(str(topic))
                outcome = self._delivery.deliver_once(trigger)
                total += outcome
                if outcome.last_of_wake:
                    break
            else:
                work_left = True
        return total, work_left
