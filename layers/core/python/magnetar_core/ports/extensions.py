"""Ports: triggers, Pulsar Functions, schemas and the console's metrics history.

See ``magnetar_core.ports`` for the conventions (keys, times, errors)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.schemas.data import SchemaVersion
from magnetar_core.domain.triggers.records import TargetAnswer
from magnetar_core.domain.triggers.spec import Target, Trigger
from magnetar_wire.names import TopicName


class TriggerStore(Protocol):
    """Triggers, one versioned record per (base topic, trigger name)."""

    def get(self, topic: TopicName, name: str) -> Trigger | None:
        """The trigger, strongly consistent; None when there is none."""
        ...

    def list(self, topic: TopicName) -> list[Trigger]:
        """The topic's triggers, by name (strongly consistent)."""
        ...

    def put(self, trigger: Trigger) -> Trigger:
        """Write ``trigger`` if the stored one is still at ``trigger.version`` (0: only if
        there is none); returns what was stored (version + 1). Raises ConditionFailed."""
        ...

    def delete(self, trigger: Trigger) -> None:
        """Delete the trigger if still at ``trigger.version``; raises ConditionFailed."""
        ...


class TriggerTarget(Protocol):
    """Where a trigger's batches go: a Lambda function (locally: a registered handler) or
    a webhook."""

    def invoke(self, target: Target, body: bytes, timestamp_ms: int) -> TargetAnswer:
        """Send one batch (``records.batch_body``), signed at ``timestamp_ms`` for a
        webhook; the target's answer (a function's return: status 200 and its JSON). Raises
        TargetFailed (of ``domain.triggers.records``) when the target could not be reached,
        timed out or raised."""
        ...


@runtime_checkable
class TargetDirectory(Protocol):
    """Whether a trigger's target can be called at all, asked when the trigger is stored
    (as Lambda's CreateEventSourceMapping refuses a function that does not exist)."""

    def check(self, target: Target) -> None:
        """Raise NotFound when ``target`` is a Lambda function that does not exist (nor is
        registered locally), InvalidMessage when this service may not call it; webhooks
        and Pulsar Functions are not checked here. A check that cannot tell (throttled, a
        network error) passes: delivery reports the failure then."""
        ...


# Pulsar Functions (issue 13): stored functions, and their counters and state.


class FunctionStore(Protocol):
    """Functions, one versioned record per ``tenant/namespace/name`` (code included)."""

    def get(self, tenant: str, namespace: str, name: str) -> FunctionConfig | None:
        """The function, strongly consistent; None when there is none."""
        ...

    def list(self, tenant: str, namespace: str) -> list[FunctionConfig]:
        """The namespace's functions, by name."""
        ...

    def put(self, config: FunctionConfig) -> FunctionConfig:
        """Write ``config`` if the stored one is still at ``config.version`` (0: only if
        there is none); returns what was stored (version + 1). Raises ConditionFailed."""
        ...

    def delete(self, config: FunctionConfig) -> None:
        """Delete the function if still at ``config.version``; raises ConditionFailed."""
        ...


class FunctionStateAccess(Protocol):
    """A function's counters (integers) and state (bytes) by key, ``fqfn`` =
    ``tenant/namespace/name``; every read strongly consistent. What user code reaches
    (through ``context``): on the function runner, over the HTTP API as the function's role."""

    def incr_counter(self, fqfn: str, key: str, amount: int) -> int:
        """Add ``amount`` (may be negative) to the counter, atomically; its new value."""
        ...

    def get_counter(self, fqfn: str, key: str) -> int:
        """The counter's value (0: never incremented)."""
        ...

    def del_counter(self, fqfn: str, key: str) -> None:
        """Forget the counter (a missing one is fine)."""
        ...

    def put_state(self, fqfn: str, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` (replacing what was there)."""
        ...

    def get_state(self, fqfn: str, key: str) -> bytes | None:
        """The value under ``key`` (None: none)."""
        ...


class FunctionStateStore(FunctionStateAccess, Protocol):
    """``FunctionStateAccess`` plus forgetting all of a function's (the trusted side)."""

    def delete_all(self, fqfn: str) -> int:
        """Forget every counter and state of the function; how many items went."""
        ...

    def add_counts(
        self, fqfn: str, key: str, counts: Mapping[str, int], latest: Mapping[str, int]
    ) -> None:
        """In one atomic write of the counter item ``key``: add each of ``counts`` to its
        named number (created at 0) and set each of ``latest`` (the last write wins). Names
        are letters. Forgotten by ``delete_all``."""
        ...

    def get_counts(self, fqfn: str, key: str) -> dict[str, int]:
        """The named numbers of counter item ``key`` ({}: none)."""
        ...


class FunctionOutputs(Protocol):
    """Where a function's outputs go (``context.publish`` and return values): the
    producer in-process, or the HTTP API's produce route as the function's role."""

    def publish(self, topic: TopicName, entry: bytes, route_by: str | None) -> None:
        """Commit ``entry`` (one message) to ``topic`` with deduplication forced (its
        producer name and sequence id make a retried output a duplicate). On a partitioned
        topic's base name the partition is the one ``route_by`` hashes to (None: the
        entry's key routes it). Raises what producing raises (a MagnetarError)."""
        ...


class FunctionSandbox(Protocol):
    """Where user code runs a batch: the function runner Lambda (AWS), a subprocess (the
    local stack), this process (the in-memory service, tests)."""

    def run(self, event: Mapping[str, object]) -> TargetAnswer:
        """Run ``event`` (``{"function": fqfn, "config": {...}, "version": n, "records":
        [...], "token": str | None}``); the runner's answer (status 200 and
        ``{"batchItemFailures": [...]}``). Raises TargetFailed when it could not run."""
        ...


# Schemas (issue 15): a topic's schema registry.


class SchemaStore(Protocol):
    """A topic's schema versions (0, 1, 2...), each written once and never changed."""

    def versions(self, topic: TopicName) -> list[SchemaVersion]:
        """Every stored version of ``topic``'s schema (tombstones included), by version,
        strongly consistent; [] when it never had one."""
        ...

    def add(self, topic: TopicName, version: SchemaVersion) -> None:
        """Store ``version`` unless that version number is taken; raises ConditionFailed
        (someone stored it first)."""
        ...


Point = tuple[int, float]
"""One value of a history series: (start of its period, epoch ms; value)."""
HISTORY_PERIOD_MS = 60_000
"""A history series has one point per minute."""
HISTORY_WINDOW_MS = 3_600_000
"""The console's history reaches back one hour."""


@dataclass(frozen=True)
class History:
    """Series of a topic over time: ``msgRateIn`` / ``msgRateOut`` in messages per second
    (the period's count / its seconds), ``msgBacklog`` in messages (as sampled in the
    period; may be empty). ``scope`` says what they count: ``topic``, or ``namespace`` when
    the source keeps only the topic's namespace (CloudWatch's dimensions)."""

    scope: str
    period_ms: int
    series: Mapping[str, list[Point]]


class MetricsHistory(Protocol):
    """Where the console's charts come from: per-period rates and backlog of the past."""

    def history(self, topic: str, start_ms: int, end_ms: int) -> History:
        """The series of ``topic`` (``persistent://tenant/ns/name``) in ``[start_ms,
        end_ms)``; raises StorageFault when the source fails."""
        ...
