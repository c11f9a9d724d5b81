"""Grants: a Shared consumer's own share of the dispatch, so that one-message receives and
their acks do not each rewrite the subscription's one cursor item (Pulsar's dispatcher
gives each consumer permits; its managed cursor persists ranges).

A receive that finds its consumer with nothing granted leases up to ``GrantPolicy.entries``
entries to it on the cursor item (one conditional write per grant) and records them on the
consumer's **grant item** (a key of its own): ``queue`` the deliveries in order, ``handed``
how many of them went out. The next receives take the next delivery with one atomic
UpdateItem of that item (``handed + 1``). Acks of entries in ``leased`` (entries the cursor
leases to the consumer, recorded after the cursor write that leased them) are added to the
item's ``acked`` set with one UpdateItem, conditional on each being in ``leased``; they are
folded into the cursor (mark-delete, acknowledged ranges) by the consumer's next grant, and
by whoever takes entries away from the consumer (close, expiry, nack, redelivery), which
first *revokes* them on the item (removes them from ``leased``, bumps ``rev``), again after
every cursor read of a retried write (a grant taken meanwhile wrote the cursor): from then
on an ack of them fails its condition and goes to the cursor item itself. So ``leased`` is
always within what the cursor leases to the consumer, and no acknowledged entry is ever
dispatched again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from magnetar_core.domain.cursor.key_shared_state import HashesOf
from magnetar_core.domain.cursor.records import KEY_SHARED, SHARED, Delivery
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.log import IndexEntry

GRANT_SUBSCRIPTION = "$grant"
"""The sort key of every grant item (its partition key names the consumer)."""
GRANT_FLOOR = 8
"""The smallest grant an equal split of a backlog comes down to (``grant_split``)."""
MAX_ITEM_ACKS = 16
"""Acks of one request recorded on the grant item at most (one condition per entry); a
larger group goes to the cursor item."""


def grant_key(pk: str, subscription: str, consumer_id: str) -> str:
    """The partition key of a consumer's grant item (sort key ``GRANT_SUBSCRIPTION``): a
    key of its own, so the consumers of one subscription do not share one key's write
    capacity (``#`` is in neither a subscription's name nor a ledger key)."""
    return f"{pk}#{subscription}#{consumer_id}"


@dataclass(frozen=True)
class GrantPolicy:
    """How much one grant leases: ``entries`` at most (bounded by the consumer's fair
    share as every Shared receive is); grants serve receives asking for fewer messages
    than that. ``entries`` 1 switches grants off."""

    entries: int = 32
    low_water: int = 8
    """A dispatch round deals to a consumer whose grant holds at most this many
    deliveries not handed out (``rounds``)."""
    rounds: bool = True
    """Whether Shared grants deal to other consumers (dispatch rounds)."""
    steal_min_entries: int = 4
    steal_most: int = 2
    """At the backlog's end a grant takes back the ``steal_most`` largest slots of at least
    ``steal_min_entries`` entries other consumers have not taken (``rounds``)."""

    def serves(self, max_messages: int) -> bool:
        """Whether a receive of ``max_messages`` takes its messages from grants."""
        return self.entries > 1 and max_messages < self.entries


@dataclass
class Grant:
    """A consumer's grant item: ``queue`` the deliveries granted (``handed`` of them went
    out), ``leased`` the entries whose acks may be recorded here, ``acked`` those recorded
    and not yet folded, ``rev`` bumped by every revocation, ``revoked`` once the consumer's
    whole grant was taken back (close, expiry), ``role`` the consumer's registering role."""

    queue: tuple[Delivery, ...] = ()
    handed: int = 0
    leased: frozenset[int] = frozenset()
    acked: frozenset[int] = frozenset()
    rev: int = 0
    revoked: bool = False
    role: str | None = None
    dealt_seq: int = 0
    """The sequence of the last dealt slot the item took (``rounds``; 0: none)."""

    @property
    def next_delivery(self) -> Delivery | None:
        """The delivery the last hand-out of one took (``handed`` counts it), or None."""
        taken = self.taken(1)
        return taken[0] if taken else None

    def taken(self, count: int) -> tuple[Delivery, ...]:
        """The deliveries a hand-out of ``count`` took (``handed`` counts them; fewer when
        it went past the queue's end)."""
        return self.queue[max(0, self.handed - count) : self.handed]

    @property
    def unhanded(self) -> tuple[Delivery, ...]:
        """Deliveries granted and not handed out yet."""
        return self.queue[self.handed :]


@dataclass(frozen=True)
class GrantChange:
    """What a new grant writes on the consumer's item (``put_grant``): the new ``queue``
    (``handed`` of it handed out), the whole ``leased`` set, the ``folded`` acks to drop; applied
    only if the item's ``rev`` is still ``rev`` (0 and ``fresh``: no item yet), and bumps it."""

    queue: tuple[Delivery, ...]
    leased: frozenset[int]
    folded: frozenset[int]
    rev: int
    fresh: bool
    role: str | None = None
    handed: int = 0
    """Deliveries of ``queue`` handed out by the receive that took the grant."""
    dealt_seq: int | None = None
    """Taking a dealt slot (``rounds``): its sequence, recorded as the item's
    ``dealt_seq``; the change then also requires the item not revoked."""


def grant_split(left: int, consumers: int, entries: int) -> int:
    """How many entries one grant takes when ``left`` are still to dispatch among
    ``consumers``: an equal split, at least ``GRANT_FLOOR`` (fewer means a cursor write per
    few messages) and at most ``entries``."""
    return max(min(GRANT_FLOOR, entries), min(entries, -(-left // max(1, consumers))))


GRANTED_TYPES = frozenset({SHARED, KEY_SHARED})
"""Subscription types whose one-message receives take grants. On Key_Shared a grant holds
only messages the selector gives the consumer (in order: a key's messages are at one
consumer at a time), so handing them out one by one keeps per-key order."""


def grants_apply(state: CursorState) -> bool:
    """Whether receives on this cursor may take grants: a durable Shared or Key_Shared
    cursor that does not read the compacted view."""
    return state.sub_type in GRANTED_TYPES and state.durable and not state.read_compacted


def hashes_loader(get_many: Callable[[list[int]], Mapping[int, IndexEntry]]) -> HashesOf:
    """A loader of per-message sticky key hashes over ``get_many`` (index items by id), for
    folds that release a Key_Shared consumer's draining hashes."""
    return lambda entry_ids: {e: item.message_hashes() for e, item in get_many(entry_ids).items()}


def fold(
    state: CursorState, consumer_id: str, grant: Grant | None, hashes_of: HashesOf | None = None
) -> int:
    """Apply the acks recorded on ``consumer_id``'s grant item to ``state``: those of
    entries the cursor still leases to the consumer (others were folded already, or left
    it by an ack of their own). ``hashes_of``: Key_Shared acks that release draining hashes
    look their hashes up. Returns how many changed the cursor."""
    if grant is None or not grant.acked:
        return 0
    lease = state.leases.get(consumer_id)
    held = sorted(e for e in grant.acked if lease is not None and e in lease)
    return state.acknowledge([(e, -1) for e in held], hashes_of) if held else 0


def fold_grants(
    state: CursorState,
    grant_of: Callable[[str], Grant | None],
    hashes_of: HashesOf | None = None,
) -> int:
    """Fold the acks on the grant items of every consumer holding entries into ``state``
    (a reader's view: stats count an ack recorded on a grant item as done). Returns how
    many changed it; nothing (and no read) on a cursor that takes no grants."""
    if not grants_apply(state):
        return 0
    return sum(
        fold(state, c, grant_of(c), hashes_of) for c in list(state.leases) if state.leases.get(c)
    )


def reclaim(
    state: CursorState, consumer_id: str, grant: Grant | None, hashes_of: HashesOf | None = None
) -> int:
    """Before the cursor takes a revoked consumer's entries back: fold its acks, and send
    the deliveries granted but never handed out back uncounted (they were never
    delivered, so their redelivery counts stay), with those of a dispatch round's slot it
    never took when the whole grant was revoked (``rounds``). Returns how many went back."""
    fold(state, consumer_id, grant, hashes_of)
    back = (
        _return_slot(state, consumer_id, grant, hashes_of) if grant is None or grant.revoked else 0
    )
    if grant is None:
        return back
    unhanded = [d.entry_id for d in grant.unhanded]
    if not unhanded:
        return back
    return back + state.negative_acknowledge(
        consumer_id, unhanded, hashes_of, None, None, counted=False
    )


def _return_slot(
    state: CursorState, consumer_id: str, grant: Grant | None, hashes_of: HashesOf | None = None
) -> int:
    """Before the cursor takes all of a consumer's entries back (its grant was revoked
    whole, or it has no item): the entries of its slot never handed out go back uncounted,
    and the slot is dropped. Returns how many went back."""
    slot = state.dealt.pop(consumer_id, None)
    lease = state.leases.get(consumer_id)
    if slot is None or lease is None:
        return 0
    if grant is not None and grant.dealt_seq >= slot.seq:  # on the item: reclaimed from it
        return 0
    back = [e for e in slot.entries if e in lease]
    if not back:
        return 0
    return state.negative_acknowledge(consumer_id, back, hashes_of, None, None, counted=False)


def next_grant(
    state: CursorState,
    consumer_id: str,
    before: Grant | None,
    deliveries: Iterable[Delivery],
    carried: Iterable[Delivery] = (),
    role: str | None = None,
    handed: int = 0,
) -> GrantChange:
    """The item change after a cursor write leased ``deliveries`` to ``consumer_id``
    (``carried``: deliveries of the previous grant still leased and not handed out,
    served first): ``leased`` becomes what the cursor now leases to the consumer of the
    old ``leased`` and the new entries; the acks read (and folded) are dropped."""
    lease = state.leases.get(consumer_id)
    queue = (*carried, *deliveries)
    old = before.leased if before is not None else frozenset()
    ids = old | {d.entry_id for d in queue}
    leased = frozenset(e for e in ids if lease is not None and e in lease)
    folded = before.acked if before is not None else frozenset()
    rev = before.rev if before is not None else 0
    return GrantChange(queue, leased, folded, rev, before is None, role, handed)


def carried_over(state: CursorState, consumer_id: str, before: Grant | None) -> list[Delivery]:
    """Deliveries of ``before`` never handed out that the cursor still leases to the
    consumer (a grant revoked while the consumer stayed connected)."""
    lease = state.leases.get(consumer_id)
    if before is None or lease is None:
        return []
    return [d for d in before.unhanded if d.entry_id in lease]
