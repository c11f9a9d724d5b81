"""How much one receive response may carry: a synchronous Lambda response is at most 6 MB
(API Gateway's and a function URL's alike), and the bytes travel in base64 (4 characters
for every 3 bytes) inside JSON. Pure: sizes in, decisions out."""

from __future__ import annotations

from dataclasses import dataclass, field

from magnetar_core.domain.log import IndexEntry

ENTRY_FIELDS_BYTES = 256
"""An entry's fields besides its bytes in the SDK's shape (ids, topic, mask), generously."""
URL_FIELDS_BYTES = 1024
"""An entry sent as a presigned URL instead of its bytes: the URL and its range."""
MESSAGE_FIELDS_BYTES = 512
"""One message's fields besides its payload in the people's shape (id, properties...)."""


def base64_bytes(length: int) -> int:
    """Characters of ``length`` bytes in base64."""
    return 4 * ((length + 2) // 3)


@dataclass(frozen=True)
class ResponseBudget:
    """What one receive response may hold, in bytes.

    ``max_bytes`` (default 4 MB of Lambda's 6, the rest for headers and the envelope)
    bounds the whole body: bytes counted in base64, with every entry's and message's
    fields. When the SDK fetches by reference, an S3-stored entry goes in the body only
    when it is at most ``s3_entry_max_bytes`` and the S3-stored bytes of the response stay
    within ``s3_total_bytes``; a URL otherwise.
    """

    max_bytes: int = 4 * 1024 * 1024
    s3_entry_max_bytes: int = 1024 * 1024
    s3_total_bytes: int = 3 * 1024 * 1024

    def least_cost(self, item: IndexEntry, by_reference: bool) -> int:
        """The fewest response bytes ``item`` can take: its bytes when they must be in the
        body (stored in its index item, or no URLs allowed: the people's shape, one object
        per message), else a URL's."""
        if not by_reference:
            return (
                base64_bytes(item.length) + ENTRY_FIELDS_BYTES + MESSAGE_FIELDS_BYTES * item.count
            )
        if item.inline:
            return base64_bytes(item.length) + ENTRY_FIELDS_BYTES
        return URL_FIELDS_BYTES

    def room(self, items: dict[int, IndexEntry], by_reference: bool) -> Room:
        """A fresh tally for one dispatch over the index items ``items`` (by entry id)."""
        return Room(self, items, by_reference)

    def in_body(self, items: list[IndexEntry], by_reference: bool) -> set[int]:
        """Entry ids of ``items`` (delivered in one response) to send as bytes: every one
        without ``by_reference``; with it, those stored in their index item, then
        S3-stored ones in order while they fit ``s3_entry_max_bytes``, ``s3_total_bytes``
        and, counted at least cost, ``max_bytes``."""
        if not by_reference:
            return {item.entry_id for item in items}
        spare = self.max_bytes - sum(self.least_cost(item, True) for item in items)
        s3_left = self.s3_total_bytes
        chosen = {item.entry_id for item in items if item.inline}
        for item in items:
            if item.inline or item.length > min(self.s3_entry_max_bytes, s3_left):
                continue
            extra = base64_bytes(item.length) + ENTRY_FIELDS_BYTES - URL_FIELDS_BYTES
            if extra <= spare:
                chosen.add(item.entry_id)
                spare -= extra
                s3_left -= item.length
        return chosen


@dataclass
class Room:
    """The running tally of one dispatch: ``fits(entry_id)`` says whether the response
    still has room for that entry at its least cost; ``charge(entry_id)`` counts one that
    was delivered. Ids not in ``items`` cost nothing."""

    budget: ResponseBudget
    items: dict[int, IndexEntry]
    by_reference: bool
    used_bytes: int = field(default=0)

    def _cost(self, entry_id: int) -> int:
        item = self.items.get(entry_id)
        return 0 if item is None else self.budget.least_cost(item, self.by_reference)

    def fits(self, entry_id: int) -> bool:
        """Whether the response stays within the budget with ``entry_id`` added."""
        return self.used_bytes + self._cost(entry_id) <= self.budget.max_bytes

    def charge(self, entry_id: int) -> None:
        """Count ``entry_id``, delivered in this response."""
        self.used_bytes += self._cost(entry_id)
