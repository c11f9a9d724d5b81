"""``run_parallel``: the close of a consumer sends its last requests for all its
sub-consumers at once (and a flush its acks), so close takes one request timeout, not one
per partition."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["run_parallel"]


def run_parallel(tasks: list[Callable[[], object]], name: str) -> None:
    """Run ``tasks`` at once, each on its own thread (the first on the caller's), and wait
    for all; each task bounds its own time."""
    threads = [threading.Thread(target=t, name=f"magnetar-{name}", daemon=True)
               for t in tasks[1:]]  # fmt: skip
    for t in threads:
        t.start()
    if tasks:
        tasks[0]()
    for t in threads:
        t.join()
