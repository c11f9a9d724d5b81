"""Readers across a segment switch: a process's cached index items are read again before the
replaced objects' grace period ends."""

from __future__ import annotations

import compact_segments

from magnetar_core.domain.log import IndexEntry
from magnetar_core.services.index_cache import IndexCache


def _item(eid: int, obj: str, off: int = 0) -> IndexEntry:
    return IndexEntry(eid, obj, off, 10, 1, False, 1, 1, "p", eid, eid)


class Loader:
    def __init__(self, objects: dict[int, str]) -> None:
        self.objects = objects
        self.calls: list[list[int]] = []

    def __call__(self, key: str, ids: list[int]) -> dict[int, IndexEntry]:
        self.calls.append(ids)
        return {i: _item(i, self.objects[i], 10 * i) for i in ids}


def test_a_cached_index_item_is_read_again_once_older_than_the_max_age():
    now = [0.0]
    cache = IndexCache(max_age_ms=1_000, clock_ms=lambda: now[0])
    load = Loader({0: "entries/a", 1: "entries/b"})
    assert cache.resolve("pk", [0, 1], load)[1].object_key == "entries/b"

    load.objects = {0: "segments/s/0-1", 1: "segments/s/0-1"}  # the job switched them
    now[0] = 1_000.0
    assert cache.resolve("pk", [0, 1], load)[1].object_key == "entries/b"  # still trusted
    now[0] = 1_000.1
    resolved = cache.resolve("pk", [0, 1], load)
    assert [(resolved[i].object_key, resolved[i].offset) for i in (0, 1)] == [
        ("segments/s/0-1", 0),
        ("segments/s/0-1", 10),
    ]
    assert load.calls == [[0, 1], [0, 1]]


def test_the_default_cache_age_is_well_below_the_jobs_default_grace():
    grace_ms = int(compact_segments.DEFAULTS["grace-ms"])
    assert IndexCache().max_age_ms == 300_000
    assert IndexCache().max_age_ms * 3 == grace_ms
