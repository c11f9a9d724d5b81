"""A settable epoch-ms clock for a memory engine's ``Runtime(now_ms=...)``: tests move
``now_ms`` to make timers, leases and batching windows come due."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Clock:
    now_ms: int

    def __call__(self) -> int:
        return self.now_ms
