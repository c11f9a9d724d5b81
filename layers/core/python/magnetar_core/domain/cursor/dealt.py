"""A consumer's dealt slot (``rounds``): entries a dispatch round leased to it on the cursor
that its grant item has not taken yet."""

from __future__ import annotations

from dataclasses import dataclass

from magnetar_core.domain.rangeset import RangeSet


@dataclass
class Dealt:
    """``entries`` leased to a consumer by round ``seq`` (the cursor version that wrote
    it); on its grant item once the item's ``dealt_seq`` is at least ``seq``."""

    seq: int
    entries: RangeSet

    def to_list(self) -> list[int]:
        """``[seq, gaps and lengths...]`` (``RangeSet.to_deltas``)."""
        return [self.seq, *self.entries.to_deltas()]

    @classmethod
    def from_list(cls, data: list[int]) -> Dealt:
        return cls(int(data[0]), RangeSet.from_json(data[1:]))
