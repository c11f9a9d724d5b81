"""Topic lifecycle: lookup with auto-creation, partitioned topics, deletion with fencing (a
topic's logs and closing one: ``topics.ledgers``)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import replace

from magnetar_core.domain.errors import (
    ConditionFailed,
    InvalidMessage,
    NotAllowedError,
    ServiceUnitNotReady,
    TopicAlreadyExists,
    TopicBusy,
    TopicNotFound,
    TopicTerminated,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.topic import ACTIVE, DELETED, TopicMeta
from magnetar_core.ports import CursorStore, LogStore, TopicStore
from magnetar_core.services import optimistic
from magnetar_core.services.tenancy import Registry
from magnetar_core.services.topics.ledgers import PartitionRef, fence_ledger
from magnetar_wire.names import TopicName
from magnetar_wire.routing import partition_of_key


class Topics:
    """Finds, creates and deletes topics. Metadata is cached per process: ledgers are fenced
    on deletion, so a stale cache entry is detected at the next commit, never trusted blindly.
    A topic is created only inside a namespace that exists (``registry``: one read, at
    creation only).
    """

    def __init__(
        self,
        store: TopicStore,
        log: LogStore,
        cursors: CursorStore,
        runtime: Runtime,
        registry: Registry,
    ) -> None:
        self._store = store
        self._registry = registry
        self._log = log
        self._cursors = cursors
        self._rt = runtime
        self._cache: dict[TopicName, TopicMeta] = {}
        self._lock = threading.Lock()
        self._round_robin = itertools.count()

    def cached_meta(self, name: TopicName) -> TopicMeta | None:
        """The topic's metadata from this process's cache (read once when missing)."""
        meta = self._meta(name)
        return meta if meta is not None and meta.active else None

    def fresh_meta(self, name: TopicName) -> TopicMeta | None:
        """The topic's metadata read now (a tombstone too; None: never existed), also
        refreshing this process's cache when active."""
        return self._meta(name, fresh=True)

    def invalidate(self, name: TopicName) -> None:
        """Forget this process's cached metadata of ``name`` (and, for a partition, of its
        partitioned topic): the next operation reads it again."""
        with self._lock:
            self._cache.pop(name, None)
            if name.partition_index >= 0:
                self._cache.pop(name.base, None)

    def terminated(self, ref: PartitionRef) -> bool:
        """True when the log of ``ref`` was terminated, by this process's cached metadata
        (no request when cached): a stale answer is caught by the ledger's fence."""
        meta = self._meta(ref.topic.base if ref.partition >= 0 else ref.topic)
        return meta is not None and meta.active and meta.is_terminated(ref.partition)

    def check_open(self, ref: PartitionRef) -> None:
        """Raise TopicTerminated when the log of ``ref`` was terminated. Free while the
        cache says it is open; a cached "terminated" is read again (one request) before it
        is believed, as the topic may have been deleted and created anew meanwhile."""
        if not self.terminated(ref):
            return
        meta = self._meta(ref.topic.base if ref.partition >= 0 else ref.topic, fresh=True)
        if meta is not None and meta.active and meta.is_terminated(ref.partition):
            raise TopicTerminated(
                f"Topic {ref.topic} was terminated: it takes no more messages (nothing was "
                "stored); produce to another topic"
            )

    def update(self, name: TopicName, change: Callable[[TopicMeta], TopicMeta | None]) -> TopicMeta:
        """Change an active topic's metadata with a versioned write (``optimistic``, fresh
        reads; ``change`` returns the new record without its version, or None to write
        nothing) and drop this process's cached copy. Returns the record as stored. Raises
        TopicNotFound, whatever ``change`` raises, ServiceUnitNotReady (other writers kept
        winning: retry)."""

        def read() -> TopicMeta:
            return self.get(name)

        def changed(meta: TopicMeta) -> tuple[TopicMeta, tuple[TopicMeta, TopicMeta] | None]:
            new = change(meta)
            if new is None:
                return meta, None
            new = replace(new, version=meta.version + 1)
            return new, (new, meta)

        def write(new_and_read: tuple[TopicMeta, TopicMeta]) -> None:
            self._store.put(*new_and_read)

        outcome = optimistic.update(read, changed, write, self._rt, 8)
        self.invalidate(name)
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Topic {name} kept changing meanwhile; retry")
        return outcome

    def _meta(self, name: TopicName, fresh: bool = False) -> TopicMeta | None:
        if not fresh:
            with self._lock:
                cached = self._cache.get(name)
            if cached is not None:
                return cached
        meta = self._store.get(name)
        with self._lock:
            if meta is not None and meta.active:
                self._cache[name] = meta
            else:  # deleted since it was cached: forget the dead ledger
                self._cache.pop(name, None)
        return meta

    def resolve(
        self,
        name: TopicName,
        *,
        create: bool,
        allow_non_persistent: bool = False,
        fresh: bool = False,
    ) -> PartitionRef:
        """The log a data operation on ``name`` uses (``fresh``: by metadata read now, not
        this process's cached copy, which may name the ledger of a deleted incarnation).

        Auto-creates a missing non-partitioned topic when ``create``. Raises TopicNotFound
        (unknown topic, partition out of range, a topic to create in a namespace that does
        not exist) or NotAllowedError (a partitioned topic's
        base name: data operations address its partitions).
        """
        if not name.persistent and not allow_non_persistent:
            raise NotAllowedError(
                f"Topic {name} is non-persistent; non-persistent topics are not served yet"
            )
        index = name.partition_index
        if index >= 0:
            parent = self._meta(name.base, fresh=fresh)
            if parent is not None and parent.active and 0 < parent.partitions <= index:
                parent = self._meta(name.base, fresh=True)  # grown since it was cached?
            if parent is not None and parent.active and parent.partitions > 0:
                if index >= parent.partitions:
                    raise TopicNotFound(
                        f"Topic {name} does not exist: {name.base} has {parent.partitions} partitions"
                    )
                return PartitionRef(name, index, parent.ledger_id)
        meta = self._meta(name, fresh=fresh)
        if meta is None or not meta.active:
            if not create:
                raise TopicNotFound(f"Topic {name} does not exist")
            meta = self._create(name, 0, previous=meta, exists_ok=True)
        if meta.partitions > 0:
            raise NotAllowedError(
                f"Topic {name} is partitioned ({meta.partitions} partitions): "
                f"address a partition such as {name.partition(0)}"
            )
        return PartitionRef(name, -1, meta.ledger_id)

    def route(self, name: TopicName, key: str | None, scheme: str) -> TopicName:
        """The partition an entry for ``name`` goes to when ``name`` is a partitioned topic's
        base name (by key hash, else round robin per process); otherwise ``name`` itself.

        Raises InvalidMessage for an unknown hashing scheme.
        """
        if name.partition_index >= 0:
            return name
        meta = self._meta(name)
        if meta is None or not meta.active or meta.partitions == 0:
            return name
        if key is None:
            return name.partition(next(self._round_robin) % meta.partitions)
        try:
            return name.partition(partition_of_key(key, meta.partitions, scheme))
        except ValueError as exc:
            raise InvalidMessage(str(exc)) from exc

    def require_namespace(self, name: TopicName) -> None:
        """Raises TopicNotFound (404) "Namespace does not exist" unless ``name``'s namespace
        exists (one read)."""
        self._registry.require_topic_namespace(name)

    def create(self, name: TopicName, partitions: int) -> TopicMeta:
        """Create a topic (``partitions`` 0: non-partitioned). Raises TopicAlreadyExists,
        TopicNotFound (its namespace does not exist)."""
        if name.partition_index >= 0 and partitions > 0:
            raise NotAllowedError(f"A partition name cannot be a partitioned topic: {name}")
        previous = self._meta(name, fresh=True)
        if previous is not None and previous.active:
            raise TopicAlreadyExists(f"Topic {name} already exists")
        return self._create(name, partitions, previous=previous, exists_ok=False)

    def _create(
        self, name: TopicName, partitions: int, previous: TopicMeta | None, exists_ok: bool
    ) -> TopicMeta:
        self._registry.require_topic_namespace(name)
        # a ledger no earlier incarnation had, even one this store forgot (never reused ids)
        ledger_id = max(self._rt.new_ledger_id(), (previous.ledger_id + 1) if previous else 1)
        meta = TopicMeta(
            name=name,
            ledger_id=ledger_id,
            partitions=partitions,
            state=ACTIVE,
            version=(previous.version + 1) if previous else 1,
            created_ms=self._rt.now_ms(),
        )
        try:
            self._store.put(meta, previous)
        except ConditionFailed:
            winner = self._meta(name, fresh=True)
            if exists_ok and winner is not None and winner.active:
                return winner
            raise TopicAlreadyExists(f"Topic {name} already exists") from None
        with self._lock:
            self._cache[name] = meta
        return meta

    def get(self, name: TopicName) -> TopicMeta:
        """Active metadata of a topic (fresh read); raises TopicNotFound."""
        meta = self._meta(name, fresh=True)
        if meta is None or not meta.active:
            raise TopicNotFound(f"Topic {name} does not exist")
        return meta

    def partitions_of(self, meta: TopicMeta) -> list[PartitionRef]:
        """The logs of a topic: one per partition, or the topic itself."""
        if meta.partitions == 0:
            return [PartitionRef(meta.name, -1, meta.ledger_id)]
        return [
            PartitionRef(meta.name.partition(i), i, meta.ledger_id) for i in range(meta.partitions)
        ]

    def list(self, namespace_name: str) -> list[TopicMeta]:
        return self._store.list(namespace_name)

    def delete(self, name: TopicName, *, partitioned: bool, force: bool) -> None:
        """Delete a topic: tombstone it, fence its ledgers, drop its cursors.

        Raises TopicNotFound, NotAllowedError (wrong path for the topic's kind) or TopicBusy
        (consumers connected and not ``force``). Entry objects of the dead ledger are left
        for the expiry job to collect.
        """
        meta = self.get(name)
        if partitioned != (meta.partitions > 0):
            kind = "partitioned" if meta.partitions else "non-partitioned"
            raise NotAllowedError(f"Topic {name} is {kind}; use the {kind} delete path")
        refs = self.partitions_of(meta)
        if not force:
            for ref in refs:
                if any(c.consumers for c in self._cursors.list(ref.key)):
                    raise TopicBusy(f"Topic {name} has connected consumers; use force=true")
        tomb = TopicMeta(
            name, meta.ledger_id, meta.partitions, DELETED, meta.version + 1, meta.created_ms
        )
        try:
            self._store.put(tomb, meta)
        except ConditionFailed:
            raise TopicBusy(f"Topic {name} changed while being deleted; retry") from None
        self.invalidate(name)
        for ref in refs:
            self.fence(ref.key)
            self._cursors.delete_all(ref.key)

    def fence(self, key: str) -> None:
        """Close a ledger: put a fence item right after its last entry."""
        fence_ledger(self._log, key)
