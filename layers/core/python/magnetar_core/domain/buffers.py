"""Non-persistent topics' buffered entries and where each subscription's buffer lives."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BufferedEntry:
    key: str
    entry_id: int
    data: bytes


def buffer_key(partition_topic: str, subscription: str) -> str:
    return f"{partition_topic}|np|{subscription}"
