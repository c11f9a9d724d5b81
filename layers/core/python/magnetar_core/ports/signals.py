"""Ports: timers, wakes, commit signals, job launchers and the notification channel.

See ``magnetar_core.ports`` for the conventions (keys, times, errors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from magnetar_core.domain.notify import Watch
from magnetar_wire.names import TopicName


class TimerStarter(Protocol):
    """Starts the delay timer of one cursor's due bucket (a workflow that adds the bucket
    to the cursor's released set when it is due)."""

    def start(self, pk: str, subscription: str, timer_id: str, bucket_ms: int) -> bool:
        """Start the timer releasing ``bucket_ms`` on cursor ``(pk, subscription)``; True
        if started now, False if it was started before (idempotent by ``timer_id`` and
        bucket). Raises TooManyRequests, StorageFault."""
        ...


class TriggerWakes(Protocol):
    """Wakes a topic's triggers at a later time without a commit (the trigger wake
    workflow on AWS: ``domain.triggers.wakes``)."""

    def wake_at(self, topic: str, at_ms: int) -> None:
        """Run the triggers of base topic ``topic`` (full name) at ``at_ms`` (epoch ms, a
        whole second); idempotent: one wake per topic and second, however often asked.
        Raises TooManyRequests, StorageFault."""
        ...


class CommitSignal(Protocol):
    """Commit notifications per log key, so a long-poll wakes on a commit instead of at its
    next head check. ``version`` is read *before* the check a wait follows, and ``wait``
    returns at once if a commit came since: no wake is lost between the check and the wait.
    """

    @property
    def wakes(self) -> bool:
        """True when every commit of the engines sharing this signal notifies it (one
        process: the local stack, the memory service); False when waits only time out (AWS:
        a commit in another Lambda container cannot reach this one), so waits poll."""
        ...

    def version(self, pk: str) -> int:
        """The key's notification counter now (pass it to ``wait``)."""
        ...

    def notify(self, pk: str) -> None:
        """An entry was committed to ``pk``: wake its waiters. Makes no AWS request."""
        ...

    def wait(self, pk: str, seen: int, timeout_ms: float) -> bool:
        """Block until ``pk`` was notified since ``version`` answered ``seen`` (True, at
        once if it already was) or ``timeout_ms`` passed (False)."""
        ...


class ChannelWakes(Protocol):
    """Wakes the notification channel's sleeping consumers of a partition when entries can
    be received again without a commit (a commit's stream record wakes them otherwise):
    ``services.notify.Notify``, which posts nothing when no channel is deployed."""

    def wake(self, topic: TopicName, moved: int = 1) -> None:
        """``moved`` entries of partition ``topic`` are deliverable again (a nack, a
        redelivery, a closed consumer's entries, a seek, a cursor reset): tell its watchers
        as a commit would. Does nothing when ``moved`` is 0; never raises (a lost notice is
        found by the sleepers' next keepalive)."""
        ...


class JobLauncher(Protocol):
    """Starts a maintenance job run (spark_glue/); never waits for it."""

    def start(self, job: str, args: Mapping[str, str]) -> str:
        """Start ``job`` (one of ``domain.jobs.JOBS``) with extra Glue-style ``args``
        (``{"topic": "..."}`` becomes ``--topic ...``); returns the run id. Raises
        UnknownJob, StorageFault (the run could not start)."""
        ...


class WatchStore(Protocol):
    """The notification channel's connections and watches (``domain.notify``; DynamoDB: the
    notify table, items expiring by TTL at ``expires_ms``)."""

    def connect(self, connection_id: str, role: str | None, expires_ms: int) -> None:
        """Record an open connection and the role it proved (None: authentication off)."""
        ...

    def connection(self, connection_id: str) -> tuple[bool, str | None]:
        """``(known, role)`` of a connection (known False: never connected or ended)."""
        ...

    def put(self, watches: list[Watch], expires_ms: int) -> None:
        """Store ``watches`` (idempotent), each also listed under its connection."""
        ...

    def of_topic(self, topic: str) -> list[Watch]:
        """The watches of partition ``topic`` (full name)."""
        ...

    def consume(self, watch: Watch) -> bool:
        """Delete one watch of its topic (it stays listed under its connection); True when
        this call deleted it (False: another notifier did, or it was gone)."""
        ...

    def disconnect(self, connection_id: str) -> list[Watch]:
        """Forget a connection and its watches; returns every watch it had (idempotent)."""
        ...


class Connections(Protocol):
    """Posts to open channel connections (API Gateway's management API on AWS)."""

    def post(self, connection_id: str, data: bytes) -> bool:
        """Send ``data`` to the connection; False when it is gone (410). Raises
        TooManyRequests, StorageFault."""
        ...
