"""In-memory trigger wakes: the wake workflow without Step Functions, recorded.

``wake_at`` records one wake per (topic, second), by the workflow's deterministic
execution name; ``due(now_ms)`` takes the wakes whose time has come (what the workflow
would invoke the fan-out with). Nothing runs by itself: a test or a driver calls ``due``.
"""

from __future__ import annotations

import threading

from magnetar_core.domain.triggers.wakes import wake_execution_input, wake_execution_name


class TriggerWakes:
    """Records wakes; ``due`` hands out those whose time has come, once each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: set[str] = set()
        self._pending: list[tuple[int, str]] = []

    def wake_at(self, topic: str, at_ms: int) -> None:
        """Record a wake of ``topic`` at ``at_ms`` (epoch ms), once per topic and second.
        The input is built as the AWS adapter builds it (the same values fail)."""
        name = wake_execution_name(topic, at_ms)
        wake_execution_input(topic, at_ms)
        with self._lock:
            if name not in self._started:
                self._started.add(name)
                self._pending.append((at_ms, topic))

    def pending(self) -> list[tuple[int, str]]:
        """``(at_ms, topic)`` of the wakes not handed out yet, by time."""
        with self._lock:
            return sorted(self._pending)

    def due(self, now_ms: int) -> list[str]:
        """The topics of the wakes due at ``now_ms`` (each once, by time), removed."""
        with self._lock:
            due = sorted(w for w in self._pending if w[0] <= now_ms)
            self._pending = [w for w in self._pending if w[0] > now_ms]
        return list(dict.fromkeys(topic for _, topic in due))
