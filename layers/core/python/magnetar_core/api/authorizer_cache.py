"""The cache of authorizer answers by ``Authorization`` value, as API Gateway keeps one
(``AuthorizerResultTtlInSeconds``): used by the function-URL front door (``api.front_door``)
and by the local gateway's authorizer (``magnetar_local.authorizer``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

MAX_CACHED_HEADERS = 10_000
"""At most this many answers are kept (expired ones go first, then the oldest)."""


class AuthorizerCache:
    """Answers kept ``ttl_s`` seconds each (0: nothing is kept); ``clock_s``: monotonic
    seconds. Thread-safe."""

    def __init__(self, ttl_s: float, clock_s: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s, self._clock_s = ttl_s, clock_s
        self._answers: dict[str, tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def get(self, header: str) -> dict[str, Any] | None:
        """The answer kept for ``header`` while it is fresh, else None."""
        with self._lock:
            found = self._answers.get(header)
        return found[1] if found is not None and found[0] > self._clock_s() else None

    def put(self, header: str, answer: dict[str, Any]) -> None:
        """Keep ``answer`` for ``header`` for ``ttl_s`` seconds (no-op when ``ttl_s`` <= 0)."""
        if self.ttl_s <= 0:
            return
        now = self._clock_s()
        with self._lock:
            if len(self._answers) >= MAX_CACHED_HEADERS:
                for key in [k for k, (until, _) in self._answers.items() if until <= now]:
                    del self._answers[key]
                while len(self._answers) >= MAX_CACHED_HEADERS:
                    del self._answers[next(iter(self._answers))]
            self._answers[header] = (now + self.ttl_s, answer)
