"""Reading leased entries for a receive response: bytes while they fit, else presigned
URLs (a Lambda response must stay within 6 MB: ``domain.response_budget``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from magnetar_core.domain import metering
from magnetar_core.domain.cursor.state import Delivery
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.response_budget import ResponseBudget
from magnetar_core.ports import EntryStore
from magnetar_core.services.entries import DeliveredEntry, entry_bytes
from magnetar_core.services.topics import PartitionRef


class Fetcher:
    """Reads entries from ``entries`` (up to 8 in parallel; an entry inline in its index
    item needs no read) for one receive response, within ``budget``: in the body as
    ``ResponseBudget.in_body`` chooses, as URLs beyond: presigned GETs of the delivered
    entry's object only, valid ``download_url_expiry_s`` seconds (the SDK fetches them as
    the response arrives, so a short life costs nothing and bounds what a leaked URL
    exposes). The dispatcher leases no more than the budget holds (``Room``)."""

    def __init__(
        self,
        entries: EntryStore,
        budget: ResponseBudget,
        download_url_expiry_s: int = 60,
    ) -> None:
        self._entries = entries
        self.budget = budget
        self._url_expiry_s = download_url_expiry_s
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="entry-get")

    def fetch(
        self,
        ref: PartitionRef,
        deliveries: list[tuple[Delivery, IndexEntry]],
        by_reference: bool,
    ) -> list[DeliveredEntry]:
        """Read the entries: in the body as the budget allows, else as URLs."""
        inline = self.budget.in_body([item for _, item in deliveries], by_reference)

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
