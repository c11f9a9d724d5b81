"""The commit signal of Lambda containers: none reaches another (no shared memory, and no
AWS request is worth a wake), so a wait is a sleep of the runtime's clock and the long-poll
polls the head at its adaptive interval (``domain.check_interval``)."""

from __future__ import annotations

from collections.abc import Callable


class PollingSignal:
    """``CommitSignal`` that never wakes: ``wait`` sleeps ``timeout_ms`` through ``sleep_ms``
    (the runtime's: fake runtimes make it instant) and answers False."""

    wakes = False

    def __init__(self, sleep_ms: Callable[[float], None]) -> None:
        self._sleep_ms = sleep_ms

    def version(self, pk: str) -> int:
        """Always 0: nothing is counted."""
        return 0

    def notify(self, pk: str) -> None:
        """Nothing to wake in this container (it serves one request at a time)."""

    def wait(self, pk: str, seen: int, timeout_ms: float) -> bool:
        """Sleep ``timeout_ms`` (ms); False (not woken)."""
        if timeout_ms > 0:
            self._sleep_ms(timeout_ms)
        return False
