"""Records the contract tests store: index entries with plausible defaults."""

from __future__ import annotations

from typing import Any

from magnetar_core.domain.log import IndexEntry


def entry(entry_id: int, count: int = 1, **fields: Any) -> IndexEntry:
    """An index entry with plausible defaults (``fields`` override them)."""
    values: dict[str, Any] = {
        "entry_id": entry_id,
        "object_key": f"obj/{entry_id}",
        "offset": 0,
        "length": 100 + entry_id,
        "count": count,
        "batched": count > 1,
        "publish_min_ms": 1_700_000_000_000 + entry_id,
        "publish_max_ms": 1_700_000_000_000 + entry_id,
        "producer": "p-1",
        "sequence_min": entry_id,
        "sequence_max": entry_id + max(count - 1, 0),
    }
    values.update(fields)
    return IndexEntry(**values)
