"""Cursor changes of the expire job: TTL mark-delete moves, lapsed consumers, gone readers.

``advance_mark_delete`` is pure (a ``CursorState`` in, the same state changed); ``apply``
does one cursor's planned change as the engine does every cursor write: read strongly
consistent, change, write conditionally on the version read, retry a lost race.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.domain.cursor.key_shared_state import HashesOf
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import ConditionFailed


def advance_mark_delete(
    state: CursorState, entry_id: int, hashes_of: HashesOf | None = None
) -> int:
    """Acknowledge everything up to and including ``entry_id``, as Pulsar's message expiry
    does (delayed messages too); never moves backwards. Returns how far it moved (entries).

    Acks, redeliveries, leases, batch acks, redelivery counts, delayed entries, Key_Shared
    masks and dead letter outbox items (expired, not dead-lettered: their entries may go)
    at or below the new mark-delete are dropped; the read position moves past it.
    On Key_Shared, entries in flight are acknowledged first so draining hashes are released
    (``hashes_of`` loads their key hashes, needed only when some hash is draining).
    """
    before = state.mark_delete
    if entry_id <= before:
        return 0
    if state.key_shared is not None:
        held = [e for e in state.in_flight() if e <= entry_id]
        if held:
            state.acknowledge([(e, -1) for e in held], hashes_of)
    state.mark_delete = max(state.mark_delete, entry_id)
    up_to = state.mark_delete
    state.read_position = max(state.read_position, up_to + 1)
    state.forget_up_to(up_to)
    state.dead_letters = [d for d in state.dead_letters if d.entry_id > up_to]
    state.roster.drop_empty()
    state.acks.advance()
    return state.mark_delete - before


@dataclass(frozen=True)
class CursorAction:
    """What the plan says to do to one cursor (``expire_transform.cursor_actions``)."""

    subscription: str
    ttl_md: int | None
    lapsed: bool
    drop: bool


@dataclass
class CursorOutcome:
    """What happened: ``ok`` False means the partition's deletions must wait for a later run
    (the cursor kept changing, or a reader planned as gone came back)."""

    ok: bool = True
    moved: int = 0
    consumers_expired: int = 0
    dropped: int = 0


def apply(
    store: CursorStore,
    pk: str,
    action: CursorAction,
    now_ms: int,
    lease_ms: int,
    hashes_of: HashesOf | None = None,
    max_attempts: int = 16,
    sleep: Callable[[float], None] = time.sleep,
) -> CursorOutcome:
    """Apply one planned cursor change: expire lapsed consumers, move mark-delete for TTL,
    delete a non-durable cursor left without consumers. A cursor gone meanwhile is fine."""
    for attempt in range(max_attempts):
        state = store.get(pk, action.subscription)
        if state is None:
            return CursorOutcome()
        expired = state.expire_consumers(now_ms, lease_ms)
        moved = (
            advance_mark_delete(state, action.ttl_md, hashes_of) if action.ttl_md is not None else 0
        )
        try:
            if not state.durable and not state.consumers:
                store.delete(pk, state)
                return CursorOutcome(consumers_expired=len(expired), dropped=1)
            if expired or moved:
                store.put(pk, state)
        except ConditionFailed:
            sleep(min(0.1, 0.002 * 2**attempt))
            continue
        came_back = action.drop and bool(state.consumers)
        return CursorOutcome(not came_back, int(moved > 0), len(expired))
    return CursorOutcome(ok=False)
