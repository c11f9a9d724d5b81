"""A function's status and stats, as Pulsar's ``functions status`` and ``functions stats``
answer them (``FunctionStatus``, ``FunctionStatsImpl``), kept by the trusted side.

The dispatcher (``dispatch``) records each batch as it comes back from the sandbox: the
messages received, those processed successfully, the user exceptions (``process`` raised:
the runner names them in its answer), the time ``process`` took, and a system exception
when the batch could not run at all (the code does not load, the runner died or timed out).
Counts are one counter item of the function's (``ports.FunctionStateStore.add_counts``: one
atomic write per batch) under the name ``<name>~stats``, which no function can have (``~`` is not allowed in a name) and no
route reaches, so user code can neither read nor forge them; the latest exceptions (10 of
each kind, best effort: two batches finishing together may each keep their own) are a state
value there. They are deleted with the function. The same counts go to the invocation's
metrics (``domain.metering``: ``FunctionMessagesProcessed``, ``FunctionUserExceptions``,
``FunctionSystemExceptions`` of the trigger fan-out's EMF record on AWS).

A function runs as one instance (instance 0): each batch in a child process of its own, so
there is no long-lived process to count; ``numRestarts`` counts the batches whose instance
failed to run (a system exception: Pulsar restarts its instance then) and the restarts
asked for (``functions restart``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from magnetar_core.domain import metering
from magnetar_core.ports import FunctionStateStore

STATS_SUFFIX = "~stats"
LATEST = 10
"""How many of the latest user and system exceptions status keeps, of each kind."""
MAX_EXCEPTION_CHARS = 1000
MAX_RESULT_CHARS = 64 * 1024
WORKER_ID = "magnetar"
RECEIVED, PROCESSED, USER, SYSTEM = "received", "processed", "userExceptions", "systemExceptions"
RESTARTS, LATENCY_US, TIMED, LAST = "restarts", "processMicros", "timedMessages", "lastInvocation"
RESULTS = "triggerResults"
TOTALS = "totals"
"""The counter item holding every count (one write per batch)."""
LATEST_RESULTS = 16


@dataclass(frozen=True)
class BatchReport:
    """What the runner reported of a batch, checked: it comes from the process that ran
    user code, so nothing in it is trusted beyond its own function's stats (counts clamped
    to the batch, texts cut, results only of the batch's messages)."""

    processed: int = 0
    process_ms: float = 0.0
    user_exceptions: tuple[tuple[str, str], ...] = ()
    """``(exceptionString, messageId)`` of each message ``process`` raised on."""
    results: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, answer: Mapping[str, Any], message_ids: list[str]) -> BatchReport:
        """The report in ``answer`` (the runner's) of a batch of ``message_ids``."""
        count = len(message_ids)
        raised = answer.get("userExceptions")
        user = tuple(
            (str(e.get("exceptionString", ""))[:MAX_EXCEPTION_CHARS], str(e.get("messageId", "")))
            for e in (raised if isinstance(raised, list) else [])[:count]
            if isinstance(e, Mapping)
        )
        ms = answer.get("processMs")
        results = answer.get("results")
        kept = {}
        if isinstance(results, Mapping):
            for message_id in set(message_ids) & set(results):
                value = results[message_id]
                if isinstance(value, Mapping):
                    kept[message_id] = {k: str(v)[:MAX_RESULT_CHARS] for k, v in value.items()
                                        if k in ("value", "exception")}  # fmt: skip
        return cls(
            processed=max(0, min(_int(answer.get("processed")), count - len(user))),
            process_ms=float(ms) if isinstance(ms, int | float) and 0 <= ms < 1e9 else 0.0,
            user_exceptions=user,
            results=kept,
        )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def stats_fqfn(fqfn: str) -> str:
    """Where function ``fqfn``'s stats are kept (see the module)."""
    return fqfn + STATS_SUFFIX


def exception(text: str, now_ms: int) -> dict[str, Any]:
    """Pulsar's ExceptionInformation."""
    return {"exceptionString": text[:MAX_EXCEPTION_CHARS], "timestampMs": now_ms}


class FunctionStats:
    """Records batches and answers status and stats (see the module)."""

    def __init__(self, state: FunctionStateStore, now_ms: Callable[[], int]) -> None:
        self._state = state
        self._now_ms = now_ms

    def record_batch(self, fqfn: str, received: int, report: BatchReport) -> None:
        """Count a batch of ``received`` messages that ran, as the runner reported it: one
        write, two more when ``process`` raised, two when a message was triggered."""
        where = stats_fqfn(fqfn)
        user = report.user_exceptions
        metering.count(metering.FUNCTION_PROCESSED, report.processed)
        metering.count(metering.FUNCTION_USER_EXCEPTIONS, len(user))
        self._add(where, {RECEIVED: received, PROCESSED: report.processed, USER: len(user),
                          TIMED: report.processed + len(user),
                          LATENCY_US: int(report.process_ms * 1000)})  # fmt: skip
        if user:
            self._remember(where, "latestUserExceptions", [exception(text, self._now_ms()) for text, _ in user])  # fmt: skip
        if report.results:
            self.put_results(fqfn, report.results)

    def record_system_exception(self, fqfn: str, received: int, message: str) -> None:
        """Count a batch of ``received`` messages that could not run (``message``: why)."""
        where = stats_fqfn(fqfn)
        metering.count(metering.FUNCTION_SYSTEM_EXCEPTIONS)
        self._add(where, {RECEIVED: received, SYSTEM: 1, RESTARTS: 1})
        self._remember(where, "latestSystemExceptions", [exception(message, self._now_ms())])

    def record_restart(self, fqfn: str) -> None:
        self._state.add_counts(stats_fqfn(fqfn), TOTALS, {RESTARTS: 1}, {})

    def _add(self, where: str, counts: dict[str, int]) -> None:
        self._state.add_counts(where, TOTALS, {k: v for k, v in counts.items() if v},
                               {LAST: self._now_ms()})  # fmt: skip

    def put_results(self, fqfn: str, results: Mapping[str, Any]) -> None:
        """Keep triggered messages' results by message id (``functions trigger`` waits for
        them; the latest ``LATEST_RESULTS`` are kept)."""
        where = stats_fqfn(fqfn)
        raw = self._state.get_state(where, RESULTS)
        kept = {**(json.loads(raw) if raw else {}), **results}
        self._state.put_state(where, RESULTS, json.dumps(dict(list(kept.items())[-LATEST_RESULTS:])).encode())  # fmt: skip

    def result(self, fqfn: str, message_id: str) -> dict[str, Any] | None:
        """A triggered message's result (None: not yet)."""
        raw = self._state.get_state(stats_fqfn(fqfn), RESULTS)
        found = json.loads(raw).get(message_id) if raw else None
        return dict(found) if isinstance(found, dict) else None

    def forget(self, fqfn: str) -> None:
        self._state.delete_all(stats_fqfn(fqfn))

    def _remember(self, where: str, key: str, new: list[dict[str, Any]]) -> None:
        kept = self._latest(where, key)
        self._state.put_state(where, key, json.dumps((kept + new)[-LATEST:]).encode())

    def _latest(self, where: str, key: str) -> list[dict[str, Any]]:
        raw = self._state.get_state(where, key)
        return list(json.loads(raw)) if raw else []

    def _counts(self, fqfn: str) -> dict[str, int]:
        found = self._state.get_counts(stats_fqfn(fqfn), TOTALS)
        keys = (RECEIVED, PROCESSED, USER, SYSTEM, RESTARTS, LATENCY_US, TIMED, LAST)
        return {key: int(found.get(key, 0)) for key in keys}

    def status(self, fqfn: str, running: bool) -> dict[str, Any]:
        """Pulsar's FunctionStatus of the function's one instance."""
        counts, where = self._counts(fqfn), stats_fqfn(fqfn)
        system = self._latest(where, "latestSystemExceptions")
        instance = {
            "running": running,
            "error": system[-1]["exceptionString"] if system else "",
            "numRestarts": counts[RESTARTS],
            "numReceived": counts[RECEIVED],
            "numSuccessfullyProcessed": counts[PROCESSED],
            "numUserExceptions": counts[USER],
            "latestUserExceptions": self._latest(where, "latestUserExceptions"),
            "numSystemExceptions": counts[SYSTEM],
            "latestSystemExceptions": system,
            "averageLatency": _average_ms(counts),
            "lastInvocationTime": counts[LAST],
            "workerId": WORKER_ID,
        }
        return {"numInstances": 1, "numRunning": int(running),
                "instances": [{"instanceId": 0, "status": instance}]}  # fmt: skip

    def stats(self, fqfn: str) -> dict[str, Any]:
        """Pulsar's FunctionStatsImpl (no ``1min`` window: totals only)."""
        counts = self._counts(fqfn)
        totals = {
            "receivedTotal": counts[RECEIVED],
            "processedSuccessfullyTotal": counts[PROCESSED],
            "systemExceptionsTotal": counts[SYSTEM],
            "userExceptionsTotal": counts[USER],
            "avgProcessLatency": _average_ms(counts),
        }
        last = counts[LAST]
        instance = {**totals, "lastInvocation": last, "userMetrics": {}}
        return {**totals, "lastInvocation": last,
                "instances": [{"instanceId": 0, "metrics": instance}]}  # fmt: skip


def _average_ms(counts: Mapping[str, int]) -> float:
    """The mean time ``process`` took per message, in ms (0.0: none timed)."""
    return round(counts[LATENCY_US] / counts[TIMED] / 1000, 3) if counts[TIMED] else 0.0
