"""Ports: what the services need from storage, timers and job runners, as Protocols.

The services see only these; the adapters implement them (``adapters/aws``: DynamoDB, S3,
Step Functions and Glue; in-memory ones for tests) and the composition root
(``engine.py``) picks which. Keys: ``pk`` is a partition ledger's log key
(``<partition topic>|<ledger id>``, see ``domain.log.log_key``) unless said otherwise. Times
are epoch milliseconds unless a name says otherwise. Every conditional write raises
``ConditionFailed`` when it loses its race; every method may raise ``TooManyRequests``
(throttled) or ``StorageFault`` (the store failed), the adapters' translations of the
store's own errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from magnetar_core.domain.buffers import BufferedEntry
from magnetar_core.domain.compaction import CompactedEntry, CompactionState
from magnetar_core.domain.counters import EntryCounts, ExpiredTotals
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.notify import Watch
from magnetar_core.domain.policies import NamespacePolicies
from magnetar_core.domain.producers import DedupSnapshot, ProducerLease
from magnetar_core.domain.schemas.data import SchemaVersion
from magnetar_core.domain.security.model import NamespacePermissions, TenantInfo
from magnetar_core.domain.topic import TopicMeta
from magnetar_core.domain.triggers.records import TargetAnswer
from magnetar_core.domain.triggers.spec import Target, Trigger
from magnetar_wire.names import TopicName


class TopicStore(Protocol):
    """Topic metadata, one record per topic; a deleted topic keeps a tombstone."""

    def get(self, name: TopicName) -> TopicMeta | None:
        """The topic's metadata (a tombstone too), strongly consistent; None if never
        created."""
        ...

    def put(self, meta: TopicMeta, previous: TopicMeta | None) -> None:
        """Write ``meta`` if the stored record is still ``previous`` (same version; None:
        no record). Raises ConditionFailed when someone created or changed it first."""
        ...

    def list(self, namespace_name: str) -> list[TopicMeta]:
        """The active topics of a namespace (``domain://tenant/namespace``), by local name."""
        ...


class LogStore(Protocol):
    """The log index of each partition ledger: ``(pk, entry id) -> IndexEntry``."""

    def append(self, pk: str, entry: IndexEntry) -> None:
        """Commit ``entry`` at its ``entry_id`` (the commit point of a produce). Raises
        ConditionFailed when that id is taken."""
        ...

    def append_once(self, pk: str, entry: IndexEntry, once_key: str, expires_s: int) -> bool:
        """``append`` and a marker of ``once_key`` in ledger ``pk``, atomically: what an
        inbound source event is committed with, so that a redelivery is stored no second
        time. Returns False, writing nothing, when the marker exists (a duplicate); raises
        ConditionFailed when the entry id is taken (a lost race: the marker is not written
        either). The marker is kept at least until ``expires_s`` (epoch seconds)."""
        ...

    def last(self, pk: str) -> IndexEntry | None:
        """The highest committed entry (a fence too), strongly consistent; None if empty."""
        ...

    def head(self, pk: str) -> int:
        """The highest committed entry id, a fence not counted (-1: empty)."""
        ...

    def last_with_messages(self, pk: str, at_most: int) -> IndexEntry | None:
        """The highest entry with id <= ``at_most`` that holds messages (markers, fences and
        expired ids passed over); None if there is none."""
        ...

    def read_from(self, pk: str, start: int, limit: int) -> list[IndexEntry]:
        """Up to ``limit`` entries with ids >= ``start``, ascending (ids may have gaps where
        entries expired)."""
        ...

    def range_counts(self, pk: str, start: int, end: int) -> list[EntryCounts]:
        """``(entry_id, messages, size_bytes, publish_ms)`` of every entry with id in
        ``[start, end]``, ascending; ``messages`` is how many messages the entry holds (a
        batch of n: n), 0 for markers and chunks other than a message's last; ``publish_ms``
        the earliest publish time (one query, no per-entry read)."""
        ...

    def producer_tail(self, pk: str, start: int) -> list[tuple[int, str, int, bool]]:
        """``(entry_id, producer name, highest sequence id, completes)`` of every entry from
        ``start`` to the head, ascending, strongly consistent; ``completes`` is False for
        markers and chunks other than a message's last."""
        ...

    def exists(self, pk: str, entry_id: int) -> bool:
        """Whether ``entry_id`` is committed (strongly consistent)."""
        ...

    def get_many(self, pk: str, entry_ids: Iterable[int]) -> dict[int, IndexEntry]:
        """The entries of these ids that exist, by id (strongly consistent)."""
        ...


class CursorStore(Protocol):
    """Cursors, one versioned record per (partition ledger, subscription); the per-ledger
    producer records (lease, dedup snapshot) share the key space."""

    def get(self, pk: str, subscription: str) -> CursorState | None:
        """The cursor, strongly consistent, or None."""
        ...

    def put(self, pk: str, state: CursorState) -> None:
        """Write ``state`` if nobody wrote since it was read (``state.version``; 0: only if
        no cursor exists); on success ``state.version`` is the new version. Releases added
        by timers meanwhile that ``state`` did not consume are kept. Raises
        ConditionFailed."""
        ...

    def delete(self, pk: str, state: CursorState) -> None:
        """Delete the cursor if unchanged since ``state`` was read; raises ConditionFailed."""
        ...

    def list(self, pk: str) -> list[CursorState]:
        """Every cursor of one partition ledger (producer records not included)."""
        ...

    def delete_all(self, pk: str) -> int:
        """Delete every record of one partition ledger (cursors, producer lease, dedup
        snapshot); returns how many."""
        ...


class EntryStore(Protocol):
    """Entry objects: immutable bytes under unique keys, never overwritten. Only upload keys
    (``services.uploads``) get a presigned PUT URL; a committed entry's key never does."""

    def put(self, key: str, data: bytes) -> None:
        """Store an entry object under ``key``."""
        ...

    def put_new(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key`` only if no object has that key yet (S3's conditional
        write, ``If-None-Match: *``). Raises ConditionFailed when one has (nothing changes)."""
        ...

    def get(self, key: str, offset: int = 0, length: int | None = None) -> bytes:
        """The object's bytes, or ``length`` bytes from byte ``offset`` (a segment's entry)."""
        ...

    def find(self, key: str, limit_bytes: int | None = None) -> bytes | None:
        """The whole object of ``key`` (at most its first ``limit_bytes`` bytes: one ranged
        read, so an oversized upload is never loaded whole), or None when there is none
        (S3's NoSuchKey)."""
        ...

    def delete(self, key: str) -> None:
        """Delete the object of ``key`` if there is one (a produce refused after its object
        was stored: a terminated topic). Never used on a committed entry's key."""
        ...

    def upload_url(self, key: str, expires_s: int = 900) -> str:
        """A URL a client may PUT the object of ``key`` to, valid for ``expires_s`` seconds
        (the produce handler's large-entry path)."""
        ...

    def download_url(self, key: str, expires_s: int = 900) -> str:
        """A URL a client may GET the object of ``key`` from, valid for ``expires_s``
        seconds."""
        ...


class PolicyStore(Protocol):
    """Namespace policies (``tenant/namespace``), one versioned record per namespace."""

    def get(self, namespace: str) -> NamespacePolicies:
        """The namespace's policies (all unset, version 0, when none were written)."""
        ...

    def put(self, namespace: str, policies: NamespacePolicies) -> NamespacePolicies:
        """Replace the policies if still at ``policies.version``; returns what was stored
        (version + 1). Raises ConditionFailed when someone wrote first."""
        ...


class ProducerStateStore(Protocol):
    """Per partition ledger: the exclusive producer lease, the dedup snapshot and the
    totals of expired entries (``$expired``: what the stats count of deleted items)."""

    def lease(self, pk: str) -> ProducerLease:
        """The lease (epoch 0, no holder, version 0 when none), strongly consistent."""
        ...

    def put_lease(self, pk: str, lease: ProducerLease) -> None:
        """Write ``lease`` if unchanged since read (``lease.version``); on success
        ``lease.version`` is the new version. Raises ConditionFailed."""
        ...

    def snapshot(self, pk: str) -> DedupSnapshot:
        """The stored dedup snapshot (empty, ``upto`` -1, when none)."""
        ...

    def put_snapshot(self, pk: str, snapshot: DedupSnapshot) -> None:
        """Store ``snapshot`` unless one as new or newer (``upto``) is stored; raises
        ConditionFailed then."""
        ...

    def expired_totals(self, pk: str) -> ExpiredTotals:
        """The totals the expire job folded (``through`` -1, zeros, when none)."""
        ...

    def put_expired_totals(self, pk: str, totals: ExpiredTotals) -> None:
        """Store ``totals`` unless some as far or further (``through``) are stored; raises
        ConditionFailed then."""
        ...


class BufferStore(Protocol):
    """Non-persistent topics: per-subscription buffers of entries that expire."""

    def append(self, pk: str, key: str, entry_id: int, data: bytes, expires_s: int) -> None:
        """Buffer one entry in buffer ``pk`` (``domain.buffers.buffer_key``) under the
        time-ordered unique ``key``, until ``expires_s`` (epoch seconds)."""
        ...

    def peek(self, pk: str, limit: int, now_s: int) -> list[str]:
        """Keys of up to ``limit`` entries of buffer ``pk`` unexpired at ``now_s`` (epoch
        seconds), oldest first."""
        ...

    def take(self, pk: str, key: str) -> BufferedEntry | None:
        """Remove one buffered entry and return it; None when another consumer took it
        first (each entry goes to exactly one taker)."""
        ...


class CompactionStore(Protocol):
    """Topic compaction: the versioned ``$compaction`` pointer per partition ledger, and
    the compacted ledgers (kept entries keyed by their original entry ids)."""

    def get(self, pk: str) -> CompactionState:
        """The partition's compaction state (NOT_RUN, version 0, when never compacted),
        strongly consistent."""
        ...

    def put(self, pk: str, state: CompactionState) -> None:
        """Write ``state`` if unchanged since read (``state.version``; 0: only if absent);
        on success ``state.version`` is the new version. Raises ConditionFailed."""
        ...

    def read_from(self, ledger: str, start: int, limit: int) -> list[CompactedEntry]:
        """Up to ``limit`` kept entries of compacted ledger ``ledger`` with ids >=
        ``start``, ascending."""
        ...

    def get_many(self, ledger: str, entry_ids: Iterable[int]) -> dict[int, CompactedEntry]:
        """The kept entries of these ids, by id (ids the view dropped are absent)."""
        ...


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


@dataclass(frozen=True)
class Stores:
    """The engine's storage adapters, one per store port."""

    topics: TopicStore
    log: LogStore
    cursors: CursorStore
    entries: EntryStore
    policies: PolicyStore
    producer_state: ProducerStateStore
    buffers: BufferStore
    compaction: CompactionStore
    tenants: TenantStore
    permissions: PermissionStore
    namespaces: NamespaceStore
    triggers: TriggerStore
    functions: FunctionStore
    function_state: FunctionStateStore
    schemas: SchemaStore
    watches: WatchStore


# Security (issue 12): tenants and namespace permissions.


class TenantStore(Protocol):
    """Tenants (Pulsar's TenantInfo), one versioned record per tenant name."""

    def get(self, tenant: str) -> TenantInfo | None:
        """The tenant's info (its ``version`` the stored one), strongly consistent; None
        when there is no such tenant."""
        ...

    def list(self) -> list[str]:
        """Every tenant's name, sorted."""
        ...

    def put(self, tenant: str, info: TenantInfo) -> TenantInfo:
        """Write ``info`` if the stored record is still at ``info.version`` (0: only if the
        tenant does not exist); returns what was stored (version + 1). Raises
        ConditionFailed when someone created or changed it first."""
        ...

    def delete(self, tenant: str, info: TenantInfo) -> None:
        """Delete the tenant if still at ``info.version``; raises ConditionFailed when it
        changed since read (version 0: succeeds only if it does not exist)."""
        ...


class PermissionStore(Protocol):
    """Namespace permissions (Pulsar's AuthPolicies of ``tenant/namespace``: namespace,
    topic and subscription grants), one versioned record per namespace."""

    def get(self, namespace: str) -> NamespacePermissions:
        """The namespace's permissions, strongly consistent (none granted, version 0, when
        none were written)."""
        ...

    def put(self, namespace: str, permissions: NamespacePermissions) -> NamespacePermissions:
        """Replace the permissions if still at ``permissions.version``; returns what was
        stored (version + 1). Raises ConditionFailed when someone wrote first."""
        ...

    def delete(self, namespace: str, permissions: NamespacePermissions) -> None:
        """Delete the namespace's permissions if still at ``permissions.version`` (the
        namespace is deleted); raises ConditionFailed when they changed since read."""
        ...


class NamespaceStore(Protocol):
    """The namespaces that exist (``tenant/namespace``), one record each, listed by tenant.
    A namespace's policies and permissions are records of their own (PolicyStore,
    PermissionStore); this one says only that it exists."""

    def exists(self, namespace: str) -> bool:
        """Whether the namespace exists (strongly consistent)."""
        ...

    def list(self, tenant: str) -> list[str]:
        """The namespaces of ``tenant`` as ``tenant/namespace``, sorted."""
        ...

    def create(self, namespace: str) -> None:
        """Record the namespace; raises ConditionFailed when it exists."""
        ...

    def delete(self, namespace: str) -> None:
        """Remove the namespace's record; raises ConditionFailed when there is none."""
        ...


# Authentication (issue 12): where token keys are kept and who an IAM token's caller is.


class SecretParameters(Protocol):
    """Named secrets, decrypted (SSM Parameter Store SecureStrings; Secrets Manager secrets
    through SSM's ``/aws/reference/secretsmanager/<secret id>`` names)."""

    def read(self, name: str) -> str:
        """The decrypted value of parameter ``name``. Raises InvalidKey (of
        ``magnetar_wire.token_keys``) when there is no such parameter or it cannot be read
        (access denied, its KMS key disabled), naming the parameter."""
        ...


class CallerIdentity(Protocol):
    """Who signed a presigned ``sts:GetCallerIdentity`` call (``domain.security.iam``)."""

    def caller_arn(self, url: str, headers: Mapping[str, str]) -> str:
        """Send the presigned call (GET ``url`` with ``headers``); the caller's ARN.
        Raises BadSignature (of ``magnetar_wire.tokens``, 401) when STS refuses it
        (signature, expiry, audience header), StorageFault when STS cannot be reached."""
        ...


# Triggers (issue 13): stored triggers and the targets they deliver to.


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


class FunctionStateStore(Protocol):
    """A function's counters (integers) and state (bytes) by key, ``fqfn`` =
    ``tenant/namespace/name``; every read strongly consistent."""

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

    def delete_all(self, fqfn: str) -> int:
        """Forget every counter and state of the function; how many items went."""
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
