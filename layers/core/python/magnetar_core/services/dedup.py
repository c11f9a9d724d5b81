"""Message deduplication (Pulsar's): per producer name, the highest committed sequence id.

The state is derived from the log — every index item records its producer name and highest
sequence id — so it can always be rebuilt: a snapshot (every ``snapshot_every`` entries)
plus a replay of the index tail after it. Nothing is written per message, and a crash
between any two steps of a produce neither loses nor duplicates: a commit is in the log or
it is not, and the log is the state.
"""

from __future__ import annotations

import contextlib
import threading

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.producers import DedupSnapshot
from magnetar_core.ports import LogStore, ProducerStateStore


class Deduplicator:
    """Per-process dedup state per partition ledger, caught up from the log on demand."""

    def __init__(
        self, log: LogStore, store: ProducerStateStore, snapshot_every: int = 1000
    ) -> None:
        self._log = log
        self._store = store
        self._every = snapshot_every
        self._states: dict[str, DedupSnapshot] = {}
        self._since_snapshot: dict[str, int] = {}
        self._lock = threading.Lock()

    def _state(self, key: str) -> DedupSnapshot:
        with self._lock:
            state = self._states.get(key)
        if state is None:
            state = self._store.snapshot(key)
            with self._lock:
                state = self._states.setdefault(key, state)
        return state

    def catch_up(self, key: str) -> int:
        """Replay the index after the known state; returns the head entry id (-1: empty)."""
        state = self._state(key)
        for entry_id, producer, sequence_max, completes in self._log.producer_tail(
            key, state.upto + 1
        ):
            with self._lock:
                if completes and sequence_max > state.last.get(producer, -1):
                    state.last[producer] = sequence_max
                state.upto = max(state.upto, entry_id)
        return state.upto

    def forget(self, key: str) -> None:
        """Drop the cached state of log ``key`` (unload): read again from its snapshot and
        the log when next needed."""
        with self._lock:
            self._states.pop(key, None)
            self._since_snapshot.pop(key, None)

    def known_upto(self, key: str) -> int:
        """The highest entry id the state has seen (-1: none)."""
        state = self._state(key)
        with self._lock:
            return state.upto

    def is_duplicate(self, key: str, producer: str, sequence_max: int) -> bool:
        """True when ``producer`` already committed ``sequence_max`` (as far as known)."""
        state = self._state(key)
        with self._lock:
            return sequence_max <= state.last.get(producer, -1)

    def last_sequence_id(self, key: str, producer: str) -> int:
        """The highest sequence id committed by ``producer`` (-1: none), from the whole log."""
        self.catch_up(key)
        state = self._state(key)
        with self._lock:
            return state.last.get(producer, -1)

    def committed(
        self, key: str, entry_id: int, producer: str, sequence_max: int, completes: bool = True
    ) -> None:
        """Record our own commit; writes a snapshot every ``snapshot_every`` commits.

        ``completes`` is False for a chunk other than its message's last: every chunk
        carries the message's sequence id, and only the last one completes it (Pulsar's rule).
        """
        state = self._state(key)
        with self._lock:
            if entry_id == state.upto + 1:  # only when nothing in between is unknown
                state.upto = entry_id
                if completes:
                    state.last[producer] = max(sequence_max, state.last.get(producer, -1))
            count = self._since_snapshot.get(key, 0) + 1
            self._since_snapshot[key] = 0 if count >= self._every else count
            snapshot = DedupSnapshot(state.upto, dict(state.last)) if count >= self._every else None
        if snapshot is not None:
            with contextlib.suppress(ConditionFailed):  # a newer snapshot is stored: fine
                self._store.put_snapshot(key, snapshot)
