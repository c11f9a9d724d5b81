"""What a dispatch sent, for the stats: messages and bytes added to the cursor's
``OutCounters`` in the same write that leases them (no write of its own)."""

from __future__ import annotations

from collections.abc import Mapping

from magnetar_core.domain.cursor.records import Delivery
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.log import IndexEntry


def count_out(
    state: CursorState,
    deliveries: list[Delivery],
    known: Mapping[int, IndexEntry],
    now_ms: int,
) -> None:
    """Add ``deliveries`` to ``state.out`` at ``now_ms`` (epoch ms): a delivery of some
    batch indexes counts those messages, of a whole entry its messages (0 for a chunk other
    than its message's last, as ``msgInCounter``); bytes are the entries' stored sizes.
    Entries missing from ``known`` count no bytes and one message per index."""
    messages = size_bytes = 0
    for d in deliveries:
        item = known.get(d.entry_id)
        if d.batch_indexes is not None:
            messages += len(d.batch_indexes)
        elif item is not None:
            messages += 0 if item.partial_chunk else item.count
        size_bytes += item.length if item is not None else 0
    if deliveries:
        state.out.record(messages, size_bytes, now_ms)
