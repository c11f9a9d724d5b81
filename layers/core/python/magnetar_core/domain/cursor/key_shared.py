"""Key_Shared part of a cursor, pure: selector, draining hashes and message-level leases.

A Key_Shared subscription routes each *message* by its sticky key hash (``0..65535``), so
the messages of one batch entry may go to several consumers. The cursor still leases whole
entries per consumer (``CursorState.leases``); for an entry of which a consumer holds only
some messages, ``KeySharedState.masks[consumer][entry]`` lists the batch indexes it holds
(absent: every message of the entry not yet acknowledged). The redelivery set holds exactly
the entries below the read position with *available* messages: neither acknowledged nor
leased to anyone.

Order by key (Pulsar 4.0): a hash has unacknowledged messages at one consumer at a time.
When a join moves hashes to another consumer while their previous owner still holds
unacknowledged messages of them, they become *draining* (``keyshared.DrainingHashes``) and
are not dispatched to the new owner until those are acknowledged, negatively acknowledged,
or the previous owner leaves. ``allow_out_of_order`` turns that off.

Per-message hashes come from the index items; methods that need hashes of entries the caller
did not pass take a ``hashes_of`` loader and call it only when something is draining (or, on
a join, for the entries in flight to consumers losing hashes).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from magnetar_core.domain.cursor.key_shared_acks import KeySharedAcks
from magnetar_core.domain.cursor.key_shared_state import (
    HashesOf,
    KeySharedOptions,
    KeySharedState,
)
from magnetar_core.domain.errors import ConsumerBusy
from magnetar_core.domain.keyshared import DrainingHashes, moved_ranges, new_selector
from magnetar_core.domain.rangeset import RangeSet


class KeySharedCursor(KeySharedAcks):
    """Mixin of ``CursorState``: Key_Shared joins, leaves and dispatch (uses its fields)."""

    key_shared: KeySharedState | None
    leases: dict[str, RangeSet]
    redeliver: RangeSet
    acked: RangeSet
    batch_acks: dict[int, set[int]]
    batch_sizes: dict[int, int]
    redelivery_counts: dict[int, int]
    read_position: int
    mark_delete: int
    durable: bool
    subscription: str
    delayed: dict[int, RangeSet]

    # -- joins and leaves ------------------------------------------------------------------

    def _ks_join(
        self, consumer_id: str, name: str, options: KeySharedOptions, hashes_of: HashesOf | None
    ) -> None:
        """Add a consumer to the selector; block moved hashes still in flight elsewhere.

        Raises ConsumerBusy (mode or out-of-order differs from the subscription's),
        ConsumerAssignError / HashRangeConflict (STICKY ranges); the state is then unchanged.
        """
        ks = self.key_shared
        if ks is None or not ks.selector.consumers():
            selector = new_selector(options.mode, options.use_consistent_hashing)
            ks = KeySharedState(selector, DrainingHashes(options.allow_out_of_order))
        elif (ks.mode, ks.draining.allow_out_of_order_delivery) != (
            options.mode,
            options.allow_out_of_order,
        ):
            raise ConsumerBusy(
                f"Key_Shared subscription '{self.subscription}' uses {ks.mode} with "
                f"allowOutOfOrderDelivery={ks.draining.allow_out_of_order_delivery}; a consumer "
                f"asking for {options.mode} with allowOutOfOrderDelivery="
                f"{options.allow_out_of_order} cannot join it"
            )
        before = ks.selector.ranges()
        ks.selector.add(consumer_id, name, list(options.sticky_ranges) or None)
        self.key_shared = ks
        if ks.draining.allow_out_of_order_delivery:
            return
        moves = moved_ranges(before, ks.selector.ranges())
        for prev in {m[2] for m in moves if m[2] is not None and m[2] in self.leases}:
            spans = [(s, e) for s, e, p, _ in moves if p == prev]
            for h, n in self._ks_unacked_hashes(prev, hashes_of).items():
                owner = ks.draining.draining_consumer(h)
                if owner in (None, prev) and any(s <= h <= e for s, e in spans):
                    ks.draining.block(h, prev, n)

    def _ks_leave(self, consumer_id: str) -> None:
        """Remove a consumer from the selector and forget its draining hashes and masks
        (its leased entries then go back for redelivery). A leave only moves the leaver's
        own hashes, so it never blocks anything."""
        ks = self.key_shared
        if ks is None:
            return
        ks.selector.remove(consumer_id)
        ks.draining.on_consumer_removed(consumer_id)
        ks.masks.pop(consumer_id, None)

    def _ks_unacked_hashes(self, consumer_id: str, hashes_of: HashesOf | None) -> dict[int, int]:
        """``{hash: unacked messages}`` held by one consumer."""
        lease = self.leases.get(consumer_id)
        if not lease:
            return {}
        if hashes_of is None:
            raise ValueError("hashes_of is needed to find the hashes of messages in flight")
        hashes = hashes_of(list(lease))
        counts: dict[int, int] = {}
        for entry_id in lease:
            per = hashes.get(entry_id, ())
            for i in self._ks_held_by(consumer_id, entry_id, len(per)):
                counts[per[i]] = counts.get(per[i], 0) + 1
        return counts

    # -- who holds what --------------------------------------------------------------------

    def _ks_held_by(self, consumer_id: str, entry_id: int, count: int) -> set[int]:
        """Batch indexes of ``entry_id`` (``count`` messages) leased to one consumer."""
        lease = self.leases.get(consumer_id)
        if lease is None or entry_id not in lease:
            return set()
        mask = self.key_shared.masks.get(consumer_id, {}).get(entry_id)
        if mask is not None:
            return set(mask)
        acked = self.batch_acks.get(entry_id, ())
        return {i for i in range(count) if i not in acked}

    def _ks_available(self, entry_id: int, count: int) -> list[int]:
        """Batch indexes of an entry that are neither acknowledged nor leased."""
        taken = set(self.batch_acks.get(entry_id, ()))
        for consumer_id in self.leases:
            taken |= self._ks_held_by(consumer_id, entry_id, count)
        return [i for i in range(count) if i not in taken]

    def unacked_messages(self, consumer_id: str) -> int:
        """Messages in flight to one consumer (batch indexes counted one by one)."""
        lease = self.leases.get(consumer_id)
        if not lease:
            return 0
        masks = self.key_shared.masks.get(consumer_id, {}) if self.key_shared else {}
        total = 0
        for entry_id in lease:
            mask = masks.get(entry_id)
            if mask is not None:
                total += len(mask)
            else:
                total += self.batch_sizes.get(entry_id, 1) - len(self.batch_acks.get(entry_id, ()))
        return total

    # -- dispatch --------------------------------------------------------------------------

    def key_shared_window(self, window: int) -> tuple[list[int], bool]:
        """The first ``window`` redelivery entries, and whether there are more (then the
        dispatcher hands out no new entries, which keeps each key's order)."""
        ids = list(islice(self.redeliver, window + 1))
        return ids[:window], len(ids) > window

    def dispatch_key_shared(
        self,
        consumer_id: str,
        candidates: Iterable[tuple[int, tuple[int, ...]]],
        max_messages: int,
        max_unacked_messages: int,
        max_masked_entries: int = 10_000,
        due: dict[int, int] | None = None,
    ) -> list:
        """Lease to ``consumer_id`` the messages the selector gives it, in entry order.

        ``candidates`` are ``(entry_id, per-message hashes)``: redelivery entries ascending,
        then (unless the window was truncated) new entries from the read position. A message
        is handed out when it is available, its hash selects this consumer and it is not
        draining elsewhere. The read position advances over every new entry considered; an
        entry keeps its place in the redelivery set while it has messages left for others.
        Stops once ``max_messages`` messages are handed out, the consumer holds
        ``max_unacked_messages``, or a new partial lease would exceed ``max_masked_entries``
        masks in the subscription (bounding the cursor item). ``due`` maps entries that
        must wait to their due bucket: an entry nobody holds goes to the delayed set instead;
        entries in the delayed set are skipped. Returns Deliveries.
        """
        from magnetar_core.domain.cursor.state import Delivery

        ks = self.key_shared
        if ks is None or consumer_id not in ks.selector.consumers():
            return []
        held = self.unacked_messages(consumer_id)
        masked = sum(len(m) for m in ks.masks.values())
        waiting = self.delayed_union() if self.delayed else RangeSet()
        given = 0
        out: list[Delivery] = []
        for entry_id, hashes in candidates:
            if given >= max_messages or held >= max_unacked_messages:
                break
            count = len(hashes)
            fresh = entry_id == self.read_position and entry_id not in self.redeliver
            if entry_id in waiting or (not fresh and entry_id not in self.redeliver):
                continue
            if count == 0 or entry_id <= self.mark_delete or entry_id in self.acked:
                self.redeliver.remove(entry_id)
                if fresh:
                    self.read_position += 1
                    if count == 0:  # a marker: nothing to deliver, step over it
                        self.acked.add(entry_id)
                continue
            bucket = due.get(entry_id) if due else None
            if self.pending(bucket) and not any(entry_id in x for x in self.leases.values()):
                self.read_position += fresh
                self.redeliver.remove(entry_id)
                self.defer(entry_id, bucket)
                continue
            available = self._ks_available(entry_id, count)
            mine = [
                i
                for i in available
                if ks.selector.select(hashes[i]) == consumer_id
                and not ks.draining.is_blocked(hashes[i], consumer_id)
            ]
            prior = ks.masks.get(consumer_id, {}).get(entry_id)
            unacked = count - len(self.batch_acks.get(entry_id, ()))
            partial = len(mine) + len(prior or ()) < unacked
            new_mask = bool(mine) and partial and prior is None
            if new_mask and masked >= max_masked_entries:
                break
            if fresh:
                self.read_position += 1
            if count > 1:
                self.batch_sizes[entry_id] = count
            if len(mine) < len(available):
                self.redeliver.add(entry_id)
            else:
                self.redeliver.remove(entry_id)
            if not mine:
                continue
            self._ks_lease(consumer_id, entry_id, mine, prior, partial)
            masked += new_mask
            given += len(mine)
            held += len(mine)
            mask = None if len(mine) == count else tuple(mine)
            out.append(Delivery(entry_id, self.redelivery_counts.get(entry_id, 0), mask))
        if not self.durable:  # a reader's cursor holds nothing back
            self.acknowledge(
                [(d.entry_id, i) for d in out for i in (d.batch_indexes or range(-1, 0))]
            )
        return out

    def _ks_lease(
        self,
        consumer_id: str,
        entry_id: int,
        mine: list[int],
        prior: set[int] | None,
        partial: bool,
    ) -> None:
        masks = self.key_shared.masks
        self.leases.setdefault(consumer_id, RangeSet()).add(entry_id)
        if prior is not None:
            prior.update(mine)
        elif partial:
            masks.setdefault(consumer_id, {})[entry_id] = set(mine)
