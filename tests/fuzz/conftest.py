"""The fuzz lane's process settings (its garbage collections: tests/conftest.py's
``FULL_COLLECTION_EVERY``, for every lane)."""

from __future__ import annotations

from collections.abc import Iterator

import generation_cache
import pytest


@pytest.fixture(scope="module", autouse=True)
def generation_caches_released() -> Iterator[None]:
    """The generation caches (generation_cache) emptied after each fuzz module: the tests an
    xdist worker runs next do not carry them."""
    yield
    generation_cache.release()
