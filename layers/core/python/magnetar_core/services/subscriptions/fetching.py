"""Reading leased entries for a receive response: inline bytes while they fit, else
presigned URLs (a Lambda response must stay within 6 MB)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from magnetar_core.domain import metering
from magnetar_core.domain.cursor.state import Delivery
from magnetar_core.domain.log import IndexEntry
from magnetar_core.ports import EntryStore
from magnetar_core.services.entries import DeliveredEntry, entry_bytes
from magnetar_core.services.topics import PartitionRef


class Fetcher:
    """Reads entries from ``entries`` (up to 8 in parallel; an entry inline in its index
    item needs no read and always goes in the body, never as a URL): in the body up to
    ``inline_entry_max_bytes`` each while the response stays within
    ``response_inline_budget_bytes``, as URLs beyond: presigned GETs of the delivered
    entry's object only, valid ``download_url_expiry_s`` seconds (the SDK fetches them as
    the response arrives, so a short life costs nothing and bounds what a leaked URL
    exposes)."""

    def __init__(
        self,
        entries: EntryStore,
        inline_entry_max_bytes: int = 1024 * 1024,
        response_inline_budget_bytes: int = 3 * 1024 * 1024,
        download_url_expiry_s: int = 60,
    ) -> None:
        self._entries = entries
        self._url_expiry_s = download_url_expiry_s
        self._inline_max = inline_entry_max_bytes
        self._inline_budget = response_inline_budget_bytes
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="entry-get")

    def fetch(
        self,
        ref: PartitionRef,
        deliveries: list[tuple[Delivery, IndexEntry]],
        by_reference: bool,
    ) -> list[DeliveredEntry]:
        """Read the entries: inline while they fit the response budget, else as URLs."""
        inline: set[int] = set()
        budget = self._inline_budget
        for d, item in deliveries:
            fits = item.length <= self._inline_max and item.length <= budget
            if not by_reference or item.inline or fits:
                inline.add(d.entry_id)
                budget -= item.length

        def get(pair: tuple[Delivery, IndexEntry]) -> DeliveredEntry:
            d, item = pair
            data = url = url_range = None
            if d.entry_id in inline:
                data = entry_bytes(self._entries, item)
            else:
                url = self._entries.download_url(item.object_key, self._url_expiry_s)
                url_range = (item.offset, item.length)
            return DeliveredEntry(
                ref.topic,
                ref.ledger_id,
                d.entry_id,
                ref.partition,
                d.redelivery_count,
                d.batch_indexes,
                data,
                url,
                url_range,
            )

        metering.count_out(
            sum(item.count if d.batch_indexes is None else len(d.batch_indexes)
                for d, item in deliveries),
            sum(item.length for _, item in deliveries),
        )  # fmt: skip
        if len(deliveries) == 1:
            return [get(deliveries[0])]
        return list(self._pool.map(get, deliveries))
