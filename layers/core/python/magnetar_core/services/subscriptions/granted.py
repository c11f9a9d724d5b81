"""Which subscriptions take grants, as a container last read them (``GrantedSubscriptions``):
a subscription's kind is known only from its cursor, so each container remembers what it
last read; one it has not read yet is tried as if it did (``grants``)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from magnetar_core.domain.cursor.grants import grants_apply
from magnetar_core.domain.cursor.rounds import rounds_apply
from magnetar_core.domain.cursor.state import CursorState

REMEMBERED = 4096
"""Subscriptions whose kind a container remembers (the oldest forgotten first)."""


class GrantedSubscriptions:
    """Which (partition, subscription) a container last read as taking grants, and the
    consumers of those that deal in dispatch rounds (``rounds``)."""

    def __init__(self) -> None:
        self._known: OrderedDict[tuple[str, str], tuple[bool, tuple[str, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    def learn(self, key: str, state: CursorState) -> None:
        dealing = tuple(state.consumers) if rounds_apply(state) else ()
        with self._lock:
            self._known[(key, state.subscription)] = (grants_apply(state), dealing)
            self._known.move_to_end((key, state.subscription))
            while len(self._known) > REMEMBERED:
                self._known.popitem(last=False)

    def consumers(self, key: str, subscription: str) -> tuple[str, ...]:
        """The consumers of a subscription that deals in rounds, as last read (none when it
        does not, or was never read here)."""
        with self._lock:
            known = self._known.get((key, subscription))
            return known[1] if known is not None else ()

    def granted(self, key: str, subscription: str) -> bool:
        """Whether it may take grants: as last read, and True when never read here (a
        wrong guess costs one UpdateItem whose condition fails; the cursor read that
        follows it teaches the truth)."""
        with self._lock:
            known = self._known.get((key, subscription))
            return known[0] if known is not None else True
