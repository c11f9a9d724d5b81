"""The fuzz lane's process settings."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import generation_cache
import pytest

FULL_COLLECTION_EVERY = 100
"""Collections of the middle generation between full ones, while a fuzz module runs (Python's
default: 10)."""


@pytest.fixture(scope="module", autouse=True)
def fewer_full_collections() -> Iterator[None]:
    """Full garbage collections at most a tenth as often while a fuzz module runs, Python's
    thresholds back after it.

    Schemathesis and Hypothesis hold a large heap (360,000 objects after the memory lane) and
    every operation's strategies and Hypothesis runs push objects into the oldest generation:
    25 full collections took 4.1 of the memory lane's 42 CPU-s (timed by ``gc.callbacks``);
    with this, 7 took 1.4. The young generations are collected as before; cyclic garbage that
    reached the oldest one waits longer for a full collection (the heap ends the memory lane
    at 570,000 objects instead). Nothing the lanes check depends on when garbage is freed."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)


@pytest.fixture(scope="module", autouse=True)
def generation_caches_released() -> Iterator[None]:
    """The generation caches (generation_cache) emptied after each fuzz module: the tests an
    xdist worker runs next do not carry them."""
    yield
    generation_cache.release()
