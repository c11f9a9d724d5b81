"""IndexCache: an LRU of index items; resolve loads only what is missing, in one call."""

from dataclasses import replace

from magnetar_core.domain.log import IndexEntry
from magnetar_core.services.index_cache import IndexCache


def entry(entry_id):
    return IndexEntry(entry_id, f"obj-{entry_id}", entry_id * 10, 10, 1, False, 0, 0, "p", 0, 0)


class Loader:
    """Records every call; returns entries for the ids it knows."""

    def __init__(self, known=range(100)):
        self.calls = []
        self.known = set(known)

    def __call__(self, key, ids):
        self.calls.append((key, list(ids)))
        return {i: entry(i) for i in ids if i in self.known}


def test_resolve_on_an_empty_cache_loads_every_id_in_one_call():
    cache, load = IndexCache(), Loader()
    assert cache.resolve("k", [3, 1, 2], load) == {1: entry(1), 2: entry(2), 3: entry(3)}
    assert load.calls == [("k", [3, 1, 2])]


def test_resolve_loads_only_the_missing_ids_and_serves_the_rest_from_cache():
    cache, load = IndexCache(), Loader()
    cache.put_many("k", [entry(1), entry(3)])
    assert cache.resolve("k", [1, 2, 3, 4], load) == {i: entry(i) for i in (1, 2, 3, 4)}
    assert load.calls == [("k", [2, 4])]


def test_resolve_of_cached_ids_does_not_call_the_loader():
    cache, load = IndexCache(), Loader()
    cache.resolve("k", [1, 2], load)
    assert cache.resolve("k", [2, 1], load) == {1: entry(1), 2: entry(2)}
    assert load.calls == [("k", [1, 2])]


def test_entries_are_cached_per_log_key():
    cache, load = IndexCache(), Loader()
    cache.put_many("a", [entry(1)])
    cache.resolve("b", [1], load)
    assert load.calls == [("b", [1])]


def test_ids_the_loader_does_not_find_are_absent_and_asked_again_next_time():
    cache, load = IndexCache(), Loader(known=[1])
    assert cache.resolve("k", [1, 50], load) == {1: entry(1)}
    assert cache.resolve("k", [1, 50], load) == {1: entry(1)}
    assert load.calls == [("k", [1, 50]), ("k", [50])]


def test_the_cache_holds_at_most_capacity_items_evicting_the_oldest():
    cache, load = IndexCache(capacity=3), Loader()
    cache.put_many("k", [entry(i) for i in range(5)])
    cache.resolve("k", [0, 1, 2, 3, 4], load)
    assert load.calls == [("k", [0, 1])]


def test_the_cache_holds_at_most_max_data_bytes_of_inline_entries_evicting_the_oldest():
    cache, load = IndexCache(max_data_bytes=250), Loader()
    inline = [replace(entry(i), object_key="", data=b"x" * 100) for i in range(3)]
    cache.put_many("k", inline[:2])
    cache.put_many("k", inline[:2])  # again: counted once
    cache.put_many("k", [inline[2], entry(3)])  # 300 bytes: the oldest goes
    found = cache.resolve("k", [0, 1, 2, 3], load)
    assert load.calls == [("k", [0])]
    assert [found[i].data for i in (1, 2)] == [b"x" * 100] * 2


def test_putting_an_entry_again_refreshes_its_recency():
    cache, load = IndexCache(capacity=2), Loader()
    cache.put_many("k", [entry(1), entry(2)])
    cache.put_many("k", [entry(1)])
    cache.put_many("k", [entry(3)])
    cache.resolve("k", [1, 2, 3], load)
    assert load.calls == [("k", [2])]


def test_a_resolved_hit_refreshes_recency_as_an_lru_should():
    cache, load = IndexCache(capacity=2), Loader()
    cache.put_many("k", [entry(1), entry(2)])
    cache.resolve("k", [1], load)
    cache.put_many("k", [entry(3)])
    cache.resolve("k", [1, 2, 3], load)
    assert load.calls == [("k", [2])]


def test_a_run_of_ids_comes_from_the_cache_only_when_every_one_is_cached_and_fresh():
    now = [0.0]
    cache = IndexCache(max_age_ms=1000, clock_ms=lambda: now[0])
    cache.put_many("k", [entry(i) for i in (5, 6, 7, 9)])
    assert cache.run("k", 5, 7) == [entry(5), entry(6), entry(7)]
    assert cache.run("k", 6, 9) is None  # 8 is missing
    assert cache.run("other", 5, 5) is None
    now[0] = 1001.0
    assert cache.run("k", 5, 5) is None  # too old to trust
