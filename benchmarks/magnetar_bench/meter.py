"""``CallMeter``: gateway calls, uploads and handler time of a benchmark run."""

from __future__ import annotations

import threading
import time


class CallMeter:
    """Counts gateway calls and the time spent in handlers (the Lambda duration proxy), and
    the uploads: each is followed by the client's own S3 PUT through the presigned URL.

    Wraps ``gateway.invoke`` of the local stack's gateway for the stack's lifetime."""

    def __init__(self, gateway) -> None:
        self.calls = 0
        self.uploads = 0
        self.seconds = 0.0
        self._lock = threading.Lock()
        self._invoke = gateway.invoke
        gateway.invoke = self._timed

    def _timed(self, request, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self._invoke(request, *args, **kwargs)
        finally:
            with self._lock:
                self.calls += 1
                self.uploads += request.raw_path.endswith("/uploads")
                self.seconds += time.perf_counter() - start

    def snapshot(self) -> tuple[int, float]:
        """``(calls, handler seconds)`` so far."""
        with self._lock:
            return self.calls, self.seconds
