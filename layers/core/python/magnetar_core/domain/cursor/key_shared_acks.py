"""Key_Shared acknowledgements and redelivery, pure: releasing masks and draining hashes.

An ack or a negative ack of messages held by a consumer drops them from its lease masks and,
when that consumer has draining hashes, counts them out of those (the hashes come from the
``hashes_of`` loader, called only then). A nack with a delay of a consumer's part of a split
batch entry delays only that part (``delay_parts``). A nack names messages, not entries
(``nacked``): a consumer gives back the messages it names and keeps the rest of their
entries (``give_back``), so only those count one more redelivery. ``KeySharedAcks`` works on the parts of a cursor
that ``CursorState`` hands it for one operation; it keeps nothing of its own.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from magnetar_core.domain.cursor.acks import AckRecords
from magnetar_core.domain.cursor.consumers import ConsumerRoster
from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedState
from magnetar_core.domain.cursor.reads import ReadState
from magnetar_core.domain.rangeset import RangeSet


class KeySharedAcks:
    """What acks and redeliveries do to a Key_Shared subscription's state ``ks``."""

    def __init__(
        self, ks: KeySharedState, acks: AckRecords, reads: ReadState, roster: ConsumerRoster
    ) -> None:
        self.ks, self.acks, self.reads, self.roster = ks, acks, reads, roster

    def held_by(self, consumer_id: str, entry_id: int, count: int) -> set[int]:
        """Batch indexes of ``entry_id`` (``count`` messages) leased to one consumer."""
        lease = self.roster.leases.get(consumer_id)
        return self.ks.held_by(
            consumer_id, entry_id, count, lease, self.acks.acked_indexes(entry_id)
        )

    def available(self, entry_id: int, count: int) -> list[int]:
        """Batch indexes of an entry that are neither acknowledged nor leased, nor parked
        in the dead letter outbox."""
        acked = self.acks.acked_indexes(entry_id)
        free = self.ks.available(entry_id, count, self.roster.leases, acked)
        parked = self.reads.messages.parked_of(entry_id)
        return [i for i in free if i not in parked] if parked else free

    def holdings(self, consumer_id: str) -> dict[int, set[int]]:
        """``{entry: batch indexes}`` the consumer holds."""
        lease = self.roster.leases.get(consumer_id)
        if not lease:
            return {}
        return {e: self.held_by(consumer_id, e, self.acks.size_of(e)) for e in lease}

    def nacked(
        self,
        consumer_id: str,
        entry_ids: Iterable[int],
        indexes: Mapping[int, Collection[int]] | None,
        seen: Mapping[int, int] | None,
    ) -> dict[int, set[int]]:
        """The messages a consumer's nack sends back, by entry: those it holds of each
        entry named (only batch indexes ``indexes[entry]`` when given; -1 or an entry of
        one message: all it holds), less those whose redelivery count is not the one it
        saw (``seen[entry]``: a stale nack of an earlier delivery of them)."""
        out: dict[int, set[int]] = {}
        for entry_id in entry_ids:
            size = self.acks.size_of(entry_id)
            held = self.held_by(consumer_id, entry_id, size)
            named = indexes.get(entry_id) if indexes else None
            if named is not None and size > 1 and -1 not in named:
                held &= set(named)
            if seen and entry_id in seen:
                count = seen[entry_id]
                held = {i for i in held if self.reads.message_count(entry_id, i) == count}
            if held:
                out[entry_id] = held
        return out

    def give_back(
        self, consumer_id: str, parts: Mapping[int, set[int]], hashes_of: HashesOf | None
    ) -> list[int]:
        """Before messages ``parts`` (``{entry: batch indexes}``) the consumer holds go
        back for redelivery: they leave its masks (of an entry it keeps messages of, it
        keeps a mask of those) and its draining hashes. Returns the entries it gave back
        whole (their leases must go)."""
        released: list[tuple[int, int, str]] = []
        draining = self.ks.draining_at(consumer_id)
        whole: list[int] = []
        for entry_id, named in parts.items():
            held = self.held_by(consumer_id, entry_id, self.acks.size_of(entry_id))
            if draining:
                released += [(entry_id, i, consumer_id) for i in sorted(held & named)]
            rest = held - named
            if rest:
                self.ks.masks.setdefault(consumer_id, {})[entry_id] = rest
            else:
                self.ks.drop_mask(consumer_id, entry_id)
                whole.append(entry_id)
        self.ks.release_draining(released, hashes_of)
        return whole

    def before_ack(self, positions: list[tuple[int, int]], hashes_of: HashesOf | None) -> list[int]:
        """Release the messages about to be acknowledged (``(entry_id, batch_index)``) from
        masks and draining counts; returns the entries touched (their redelivery membership
        is refreshed by ``after_ack``). Raises ValueError when a draining hash is released
        and ``hashes_of`` is None."""
        released: list[tuple[int, int, str]] = []
        touched: list[int] = []
        for entry_id, batch_index in positions:
            if self.acks.is_acked(entry_id) or entry_id >= self.reads.read_position:
                continue
            size = self.acks.size_of(entry_id)
            acked = self.acks.acked_indexes(entry_id)
            if batch_index < 0 or size <= 1:
                indexes = [i for i in range(size) if i not in acked]
            elif batch_index < size and batch_index not in acked:
                indexes = [batch_index]
            else:
                continue
            touched.append(entry_id)
            for consumer_id in list(self.roster.leases):
                mine = self.held_by(consumer_id, entry_id, size)
                released += [(entry_id, i, consumer_id) for i in indexes if i in mine]
                if self.ks.unmask(consumer_id, entry_id, indexes):
                    self.roster.release(consumer_id, entry_id)
        self.ks.release_draining(released, hashes_of)
        return touched

    def after_ack(self, touched: Iterable[int]) -> None:
        """Take touched entries with no message left for anyone out of the redelivery set."""
        for entry_id in touched:
            size = self.acks.size_of(entry_id)
            if entry_id in self.reads.redeliver and not self.available(entry_id, size):
                self.reads.redeliver.remove(entry_id)

    def delay_parts(self, parts: Mapping[int, set[int]], waiting: RangeSet) -> None:
        """Before messages ``parts`` (``{entry: batch indexes}``) go to the delayed set (a
        nack with a delay): where they are only part of an entry's unacknowledged
        messages, record that part as the entry's delay mask, so the delay holds back the
        nacked messages only.
        The rest (another consumer's, leased or still to be delivered) stays available:
        held back with the entry, it would be overtaken by its keys' later entries.
        ``waiting`` are the entries already delayed; one delayed whole stays whole."""
        for entry_id, held in parts.items():
            prior = self.ks.delayed.get(entry_id)
            if entry_id in waiting and prior is None:
                continue
            size = self.acks.size_of(entry_id)
            if prior is not None or len(held) < size - len(self.acks.acked_indexes(entry_id)):
                self.ks.delay(entry_id, held)
