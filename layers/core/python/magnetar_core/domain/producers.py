"""Per-partition producer state: the exclusive lease and access epoch, the dedup snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ProducerLease:
    """Who holds a partition exclusively, and its access epoch. Times in epoch ms."""

    epoch: int = 0
    holder: str | None = None
    mode: str | None = None
    seen_ms: int = 0
    version: int = 0
    role: str | None = None
    """The role that registered the holder (None: authentication off or no holder)."""

    def held(self, now_ms: int, lease_ms: int) -> bool:
        """True while an exclusive holder renewed its lease within ``lease_ms``."""
        return self.holder is not None and now_ms - self.seen_ms < lease_ms


@dataclass
class DedupSnapshot:
    """Highest committed sequence id per producer name, as of entry ``upto``."""

    upto: int = -1
    last: dict[str, int] = field(default_factory=dict)
