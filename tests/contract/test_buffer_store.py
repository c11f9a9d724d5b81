"""Contract of the non-persistent buffers: oldest first, expiry filtered after the limit,
each entry taken by exactly one consumer."""

from __future__ import annotations

import pytest

from magnetar_core.domain.buffers import BufferedEntry, buffer_key

NOW_S = 1_700_000_000


@pytest.fixture
def pk(uid) -> str:
    return buffer_key(f"non-persistent://c/ns/t-{uid}", "s")


def test_an_empty_buffer_peeks_nothing_and_takes_nothing(stores, pk):
    assert stores.buffers.peek(pk, 10, NOW_S) == []
    assert stores.buffers.take(pk, "k-0") is None


def test_peek_gives_unexpired_keys_oldest_first_up_to_the_limit(stores, pk):
    for i in (2, 0, 1, 3):
        stores.buffers.append(pk, f"k-{i}", i, b"d%d" % i, NOW_S + 60)
    assert stores.buffers.peek(pk, 10, NOW_S) == ["k-0", "k-1", "k-2", "k-3"]
    assert stores.buffers.peek(pk, 2, NOW_S) == ["k-0", "k-1"]


def test_the_limit_counts_expired_entries_before_they_are_filtered_out(stores, pk):
    stores.buffers.append(pk, "k-0", 0, b"old", NOW_S)  # expires at NOW_S: expired
    stores.buffers.append(pk, "k-1", 1, b"new", NOW_S + 1)
    assert stores.buffers.peek(pk, 1, NOW_S) == []
    assert stores.buffers.peek(pk, 2, NOW_S) == ["k-1"]


def test_an_expired_entry_stays_takeable(stores, pk):
    stores.buffers.append(pk, "k-0", 4, b"late", NOW_S - 10)
    assert stores.buffers.take(pk, "k-0") == BufferedEntry("k-0", 4, b"late")


def test_take_hands_an_entry_to_exactly_one_consumer(stores, pk):
    stores.buffers.append(pk, "k-0", 7, b"\x00payload\xff", NOW_S + 60)
    assert stores.buffers.take(pk, "k-0") == BufferedEntry("k-0", 7, b"\x00payload\xff")
    assert stores.buffers.take(pk, "k-0") is None
    assert stores.buffers.peek(pk, 10, NOW_S) == []


def test_buffers_of_subscriptions_are_separate(stores, uid):
    a = buffer_key(f"non-persistent://c/ns/t-{uid}", "a")
    b = buffer_key(f"non-persistent://c/ns/t-{uid}", "b")
    stores.buffers.append(a, "k-0", 0, b"x", NOW_S + 60)
    assert stores.buffers.peek(b, 10, NOW_S) == [] and stores.buffers.take(b, "k-0") is None
