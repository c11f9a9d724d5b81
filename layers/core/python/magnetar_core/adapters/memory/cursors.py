"""In-memory cursors: one item per (partition|ledger, subscription), versioned (as
``adapters.aws.cursors``).

Items are deep copies of ``CursorState`` at their stored version. Every write is conditional
on the version read, so concurrent dispatchers never lose an update: a lost race is a
ConditionFailed that the caller retries. A consumer's grant item is a ``Grant`` under a
partition key of its own (``grant_key``), changed as the AWS adapter's UpdateItems do.
``release`` is what the timer workflow's UpdateItem
does: add a bucket to the released set and bump the version, if the cursor still exists.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence

from magnetar_core.adapters.memory.tables import MemoryTables
from magnetar_core.domain.cursor.grants import (
    GRANT_SUBSCRIPTION,
    Grant,
    GrantChange,
    grant_key,
)
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import ConditionFailed


class CursorStore:
    """Reads and conditionally writes cursor items (the cursors table)."""

    def __init__(self, tables: MemoryTables) -> None:
        self._tables = tables
        self._table = tables.cursors

    def get(self, pk: str, subscription: str) -> CursorState | None:
        """The cursor (a copy), or None."""
        with self._tables.lock:
            stored = self._table.get(pk, subscription)
            return copy.deepcopy(stored) if isinstance(stored, CursorState) else None

    def put(self, pk: str, state: CursorState) -> None:
        """Write ``state`` if nobody wrote since it was read (version ``state.version``).

        A new cursor (version 0) is written only if none exists. Raises ConditionFailed.
        On success ``state.version`` is the new version.
        """
        with self._tables.lock:
            stored = self._table.get(pk, state.subscription)
            if state.version == 0 and stored is not None:
                raise ConditionFailed(f"writing cursor {state.subscription} of {pk}")
            if state.version != 0 and (stored is None or stored.version != state.version):
                raise ConditionFailed(f"writing cursor {state.subscription} of {pk}")
            item = copy.deepcopy(state)
            item.version = state.version + 1
            self._table.put(pk, state.subscription, item)
            state.version += 1

    def delete(self, pk: str, state: CursorState) -> None:
        """Delete the cursor if unchanged since read; raises ConditionFailed."""
        with self._tables.lock:
            stored = self._table.get(pk, state.subscription)
            if stored is None or stored.version != state.version:
                raise ConditionFailed(f"deleting cursor {state.subscription} of {pk}")
            self._table.delete(pk, state.subscription)

    def list(self, pk: str) -> list[CursorState]:
        """Every cursor of one partition ledger, by subscription name (copies)."""
        with self._tables.lock:
            return [
                copy.deepcopy(item)
                for sub, item in self._table.query(pk)
                if not sub.startswith("$")
            ]

    def delete_all(self, pk: str) -> int:
        """Delete every item of one partition ledger (cursors, producer lease, dedup
        snapshot, compaction pointer); returns how many."""
        with self._tables.lock:
            keys = [sub for sub, _ in self._table.query(pk)]
            for sub in keys:
                self._table.delete(pk, sub)
        return len(keys)

    def release(self, pk: str, subscription: str, bucket_ms: int) -> bool:
        """Add ``bucket_ms`` to the cursor's released buckets and bump its version (the
        timer workflow's ``ADD rel :bucket SET ver = ver + 1``); False when the cursor is
        gone (nothing to release)."""
        with self._tables.lock:
            stored = self._table.get(pk, subscription)
            if not isinstance(stored, CursorState):
                return False
            stored.released.add(bucket_ms)
            stored.version += 1
            return True

    # -- grants ------------------------------------------------------------------------

    def grant(self, pk: str, subscription: str, consumer_id: str) -> Grant | None:
        """The consumer's grant item (a copy), or None."""
        with self._tables.lock:
            stored = self._table.get(grant_key(pk, subscription, consumer_id), GRANT_SUBSCRIPTION)
            return copy.deepcopy(stored) if isinstance(stored, Grant) else None

    def hand_out(
        self, pk: str, subscription: str, consumer_id: str, role: str | None, count: int = 1
    ) -> Grant | None:
        """Take the next ``count`` deliveries; None when there is none to take."""
        key = grant_key(pk, subscription, consumer_id)
        with self._tables.lock:
            stored = self._table.get(key, GRANT_SUBSCRIPTION)
            if not isinstance(stored, Grant) or stored.revoked:
                return None
            if stored.handed >= len(stored.queue) or not _role_ok(stored, role):
                return None
            stored.handed += count
            return copy.deepcopy(stored)

    def put_grant(self, pk: str, subscription: str, consumer_id: str, change: GrantChange) -> bool:
        """Record a new grant if the item's ``rev`` is still ``change.rev``."""
        key = grant_key(pk, subscription, consumer_id)
        with self._tables.lock:
            stored = self._table.get(key, GRANT_SUBSCRIPTION)
            if (stored is None) != change.fresh:
                return False
            if stored is not None and stored.rev != change.rev:
                return False
            if _refuses_slot(stored, change):
                return False
            acked = stored.acked - change.folded if stored is not None else frozenset()
            role = change.role if change.role is not None else (stored and stored.role)
            seq = (
                change.dealt_seq if change.dealt_seq is not None else (stored and stored.dealt_seq)
            )
            self._table.put(
                key,
                GRANT_SUBSCRIPTION,
                Grant(
                    change.queue,
                    change.handed,
                    change.leased,
                    acked,
                    change.rev + 1,
                    False,
                    role,
                    seq or 0,
                ),
            )
            return True

    def ack_granted(
        self,
        pk: str,
        subscription: str,
        consumer_id: str,
        entry_ids: frozenset[int],
        role: str | None,
    ) -> bool:
        """Add acks of entries all in ``leased``; False (nothing recorded) otherwise."""
        key = grant_key(pk, subscription, consumer_id)
        with self._tables.lock:
            stored = self._table.get(key, GRANT_SUBSCRIPTION)
            if not isinstance(stored, Grant) or not _role_ok(stored, role):
                return False
            if not entry_ids <= stored.leased:
                return False
            stored.acked = stored.acked | entry_ids
            return True

    def revoke_grant(
        self,
        pk: str,
        subscription: str,
        consumer_id: str,
        entry_ids: frozenset[int] | None,
    ) -> Grant | None:
        """Take entries (None: all, and the queue) out of ``leased``; bump ``rev``. A whole
        revocation writes a revoked item where there was none."""
        key = grant_key(pk, subscription, consumer_id)
        with self._tables.lock:
            stored = self._table.get(key, GRANT_SUBSCRIPTION)
            if not isinstance(stored, Grant) and entry_ids is None:
                stored = Grant()
            if not isinstance(stored, Grant):
                return None
            leased = frozenset() if entry_ids is None else stored.leased - entry_ids
            changed = dataclasses.replace(
                stored,
                leased=leased,
                rev=stored.rev + 1,
                revoked=stored.revoked or entry_ids is None,
            )
            self._table.put(key, GRANT_SUBSCRIPTION, changed)
            return copy.deepcopy(changed)

    def void_slot(self, pk: str, subscription: str, consumer_id: str, seq: int) -> bool:
        """Mark dealt slots up to ``seq`` as taken, unless the item took one already."""
        key = grant_key(pk, subscription, consumer_id)
        with self._tables.lock:
            stored = self._table.get(key, GRANT_SUBSCRIPTION)
            stored = stored if isinstance(stored, Grant) else Grant()
            if stored.dealt_seq >= seq:
                return False
            self._table.put(key, GRANT_SUBSCRIPTION, dataclasses.replace(stored, dealt_seq=seq))
            return True

    def grants_of(
        self, pk: str, subscription: str, consumer_ids: Sequence[str]
    ) -> dict[str, Grant | None]:
        """The grant items of ``consumer_ids`` (copies; None: no item), by consumer."""
        return {c: self.grant(pk, subscription, c) for c in consumer_ids}


def _refuses_slot(stored: Grant | None, change: GrantChange) -> bool:
    """A take of a dealt slot fails on a revoked item, or one that took (or voided) it."""
    if stored is None or change.dealt_seq is None:
        return False
    return stored.revoked or stored.dealt_seq >= change.dealt_seq


def _role_ok(grant: Grant, role: str | None) -> bool:
    return role is None or grant.role is None or grant.role == role
