"""Dispatch rounds (Shared): one cursor write that deals entries to many consumers
(Pulsar's dispatcher reading a batch and dealing it to the consumers with permits).

A consumer taking a grant on the cursor item also deals, in the same write, up to a grant's
split to every other consumer with **permits** (``has_permits``: its grant item nearly
handed out, its last slot taken). What it deals is leased to that consumer on the cursor and
recorded in the consumer's **dealt slot** (``CursorState.dealt``: the round's sequence, the
entries). The consumer's next receive whose grant is empty takes the slot onto its own grant
item with one conditional UpdateItem (``slot_to_take`` then ``services.subscriptions.
rounds``): no cursor write. Only the owner and revokers write a grant item; a round writes
the cursor alone. Whoever takes the consumer's entries back takes the slot with them
(``grants.reclaim``): entries dealt and never handed out go back uncounted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from magnetar_core.domain.cursor.dealt import Dealt
from magnetar_core.domain.cursor.grants import Grant, GrantChange, grant_split
from magnetar_core.domain.cursor.records import SHARED, Delivery
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.rangeset import RangeSet


def rounds_apply(state: CursorState) -> bool:
    """Whether a grant on this cursor may deal to other consumers: a durable Shared cursor
    that does not read the compacted view (Key_Shared grants follow the selector alone)."""
    return state.sub_type == SHARED and state.durable and not state.read_compacted


def untaken(state: CursorState, consumer_id: str, grant: Grant | None) -> bool:
    """Whether the consumer has a slot its item did not take yet (entries still leased)."""
    slot = state.dealt.get(consumer_id)
    if slot is None or (grant is not None and grant.dealt_seq >= slot.seq):
        return False
    lease = state.leases.get(consumer_id)
    return lease is not None and any(e in lease for e in slot.entries)


def has_permits(
    state: CursorState, consumer_id: str, grant: Grant | None, low_water: int, lapsed: Iterable[str]
) -> bool:
    """Whether a round may deal to ``consumer_id`` (``grant``: its item as read, None: it
    has none yet): connected and not lapsed, not revoked, no slot left to take, and at most
    ``low_water`` deliveries of its grant not handed out."""
    if consumer_id not in state.consumers or consumer_id in set(lapsed):
        return False
    if grant is not None and (grant.revoked or len(grant.unhanded) > low_water):
        return False
    return not untaken(state, consumer_id, grant)


def deal(
    state: CursorState,
    wants: Mapping[str, int],
    candidates: list[tuple[int, int]],
    max_unacked_entries: int,
    due: Mapping[int, int] | None = None,
) -> dict[str, list[Delivery]]:
    """Deal entries of ``candidates`` (as ``CursorState.dispatch`` takes them) to each
    consumer of ``wants`` (id -> entries at most), in that order; each one's slot is
    replaced by what it got, under the sequence of the write to come. Returns the
    deliveries by consumer (those that got some)."""
    seq = state.version + 1
    out: dict[str, list[Delivery]] = {}
    for consumer_id, want in wants.items():
        if want <= 0:
            continue
        given = state.dispatch(consumer_id, candidates, want, max_unacked_entries, due, None, want)
        if given:
            entries = RangeSet()
            for d in given:
                entries.add(d.entry_id)
            state.dealt[consumer_id] = Dealt(seq, entries)
            out[consumer_id] = given
    return out


def wants_of(
    state: CursorState,
    dealer: str,
    grants: Mapping[str, Grant | None],
    left: int,
    entries: int,
    low_water: int,
    lapsed: Iterable[str],
) -> dict[str, int]:
    """How many entries a round deals to each consumer with permits (``grants``: the items
    read, by consumer; a consumer not in it is not dealt to): a grant's equal split of the
    ``left`` entries still to dispatch, bounded by each one's fair share."""
    lapsed = set(lapsed)
    split = grant_split(left, len(state.consumers), entries)
    out: dict[str, int] = {}
    for consumer_id in sorted(grants):
        if consumer_id == dealer:
            continue
        if not has_permits(state, consumer_id, grants[consumer_id], low_water, lapsed):
            continue
        share = state.share_of(consumer_id, left)
        want = split if share is None else min(split, share)
        if want > 0:
            out[consumer_id] = want
    return out


def slot_to_take(state: CursorState, consumer_id: str, grant: Grant | None) -> list[Delivery]:
    """The deliveries of the consumer's untaken slot that the cursor still leases to it,
    rebuilt from the cursor (redelivery count, delivery mask); [] when there is none."""
    if not untaken(state, consumer_id, grant):
        return []
    lease = state.leases[consumer_id]
    slot = state.dealt[consumer_id]
    acks, reads = state.acks, state.reads
    out = []
    for entry_id in slot.entries:
        if entry_id in lease and not acks.is_acked(entry_id):
            size = state.batch_sizes.get(entry_id, 1)
            out.append(
                Delivery(entry_id, reads.count_of(entry_id), acks.delivery_mask(entry_id, size))
            )
    return out


def prune_slots(state: CursorState) -> None:
    """Drop slots of consumers gone or holding none of their entries (before a write)."""
    for consumer_id in list(state.dealt):
        lease = state.leases.get(consumer_id)
        slot = state.dealt[consumer_id]
        if (
            consumer_id not in state.consumers
            or lease is None
            or not any(e in lease for e in slot.entries)
        ):
            del state.dealt[consumer_id]


def take_change(
    state: CursorState,
    consumer_id: str,
    before: Grant | None,
    deliveries: list[Delivery],
    role: str | None,
    handed: int,
) -> GrantChange:
    """The item change that takes the consumer's slot (``slot_to_take``'s ``deliveries``)
    with no cursor write: ``leased`` keeps what the cursor read still leases to it, the
    acks of entries it no longer leases (folded by a round, or taken back and folded by
    the revoker) are dropped; recorded only if ``rev`` is unchanged and not revoked."""
    lease = state.leases.get(consumer_id)
    old = before.leased if before is not None else frozenset()
    ids = old | {d.entry_id for d in deliveries}
    leased = frozenset(e for e in ids if lease is not None and e in lease)
    acked = before.acked if before is not None else frozenset()
    folded = frozenset(e for e in acked if lease is None or e not in lease)
    rev = before.rev if before is not None else 0
    seq = state.dealt[consumer_id].seq
    return GrantChange(
        tuple(deliveries), leased, folded, rev, before is None, role, handed, dealt_seq=seq
    )


def slots_to_steal(
    state: CursorState,
    thief: str,
    others: Mapping[str, Grant | None],
    min_entries: int,
    most: int,
) -> list[tuple[str, Dealt]]:
    """When nothing is left to dispatch: the largest slots (``most`` at most, of at least
    ``min_entries`` entries still leased) other consumers have not taken, by consumer
    (``others``: their items as read, for slots they took since; unknown ones are tried:
    ``void_slot`` is conditional)."""
    if not rounds_apply(state) or state.redeliver:
        return []
    found = []
    for consumer_id, slot in state.dealt.items():
        if consumer_id == thief or not untaken(state, consumer_id, others.get(consumer_id)):
            continue
        lease = state.leases[consumer_id]
        held = sum(1 for e in slot.entries if e in lease)
        if held >= min_entries:
            found.append((-held, consumer_id, slot))
    return [(consumer_id, slot) for _, consumer_id, slot in sorted(found)[:most]]


def return_voided(state: CursorState, consumer_id: str, seq: int, entries: RangeSet) -> int:
    """After ``void_slot`` took slot ``seq`` back from the consumer (no grant item can take
    it any more): its entries still leased go back uncounted (never delivered), and the
    slot is dropped if it is still that one. Returns how many went back."""
    slot = state.dealt.get(consumer_id)
    if slot is not None and slot.seq <= seq:
        del state.dealt[consumer_id]
    lease = state.leases.get(consumer_id)
    back = [e for e in entries if lease is not None and e in lease]
    if not back:
        return 0
    return state.negative_acknowledge(consumer_id, back, None, None, None, counted=False)
