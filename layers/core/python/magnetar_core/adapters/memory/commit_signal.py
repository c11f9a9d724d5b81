"""In-process commit signal: a ``threading.Condition`` per log key, on one lock, in a bounded
map. Shared by every engine of one process (the memory service's engines; the local stack's
handler containers through ``magnetar_local.commit_signal``), a commit in one container
wakes the long-polls of the others at once."""

from __future__ import annotations

import threading
from collections import OrderedDict

MAX_KEYS = 4096
"""Keys remembered; the least recently used ones without waiters are dropped beyond it."""


class _Slot:
    __slots__ = ("cond", "version", "waiters")

    def __init__(self, lock: threading.Lock, version: int) -> None:
        self.cond = threading.Condition(lock)
        self.version = version
        self.waiters = 0


class CommitSignal:
    """``CommitSignal`` in memory. Versions come from one process-wide sequence: a key
    dropped from the map comes back at the current sequence, above any version handed out
    for it before, so a drop can cause a spurious wake but never a lost one."""

    wakes = True

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        self._lock = threading.Lock()
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._sequence = 0
        self._max_keys = max_keys
        self._closed = False

    def version(self, pk: str) -> int:
        """The key's counter now (its slot is made or refreshed)."""
        with self._lock:
            return self._slot(pk).version

    def notify(self, pk: str) -> None:
        """Wake every waiter of ``pk``."""
        with self._lock:
            self._sequence += 1
            slot = self._slot(pk)
            slot.version = self._sequence
            slot.cond.notify_all()

    def wait(self, pk: str, seen: int, timeout_ms: float) -> bool:
        """Block (real time) until ``pk``'s version differs from ``seen`` (True) or
        ``timeout_ms`` passed (False); after ``close``, True at once."""
        with self._lock:
            slot = self._slot(pk)
            slot.waiters += 1
            try:
                return slot.cond.wait_for(
                    lambda: slot.version != seen or self._closed, max(timeout_ms, 0) / 1000
                )
            finally:
                slot.waiters -= 1

    def waiting(self, pk: str) -> int:
        """How many waits on ``pk`` are blocked now (tests await a long-poll with it)."""
        with self._lock:
            slot = self._slots.get(pk)
            return 0 if slot is None else slot.waiters

    def remembered(self) -> int:
        """Keys remembered now (at most ``max_keys`` plus those with waiters)."""
        with self._lock:
            return len(self._slots)

    def close(self) -> None:
        """Wake every waiter now and from now on (the service stops)."""
        with self._lock:
            self._closed = True
            for slot in self._slots.values():
                slot.cond.notify_all()

    def _slot(self, pk: str) -> _Slot:
        """The key's slot, most recently used (under the lock)."""
        slot = self._slots.get(pk)
        if slot is None:
            slot = self._slots[pk] = _Slot(self._lock, self._sequence)
            self._trim()
        else:
            self._slots.move_to_end(pk)
        return slot

    def _trim(self) -> None:
        """Drop the least recently used idle slots beyond ``max_keys`` (never the newest:
        its caller holds it)."""
        excess = len(self._slots) - self._max_keys
        if excess <= 0:
            return
        newest = next(reversed(self._slots))
        idle = [k for k, s in self._slots.items() if s.waiters == 0 and k != newest]
        for key in idle[:excess]:
            del self._slots[key]
