"""The pure dispatch policy of triggers: which messages form the next batch given the groups
in flight, how many batches may be in flight, the batching window, and bisecting."""

from __future__ import annotations

import random

import pytest

from magnetar_core.domain.keyshared.hashing import sticky_key_hash
from magnetar_core.domain.triggers.dispatch import DispatchPolicy, halves, without_groups


def test_shared_takes_the_first_batch_size_messages_whatever_is_in_flight():
    policy = DispatchPolicy("Shared", batch_size=2, max_concurrency=3)
    groups = [policy.group_of(k, None, 0) for k in ("a", "a", "b")]
    assert groups == [None, None, None]
    assert policy.next_batch(groups, busy={None}) == [0, 1]


def test_key_shared_skips_every_message_of_a_key_in_flight_and_keeps_the_rest_in_order():
    policy = DispatchPolicy("Key_Shared", batch_size=3, max_concurrency=2)
    keys = ["a", "b", "a", "c", "d"]
    groups = [policy.group_of(k, None, 0) for k in keys]
    assert groups[0] == sticky_key_hash("a") and groups[0] == groups[2]
    assert policy.next_batch(groups, busy={groups[0]}) == [1, 3, 4]
    assert policy.next_batch(groups, busy=set()) == [0, 1, 2]
    assert policy.next_batch(groups, busy=set(groups)) == []


def test_an_ordering_key_wins_over_the_key_as_on_key_shared_subscriptions():
    policy = DispatchPolicy("Key_Shared")
    assert policy.group_of("a", b"o", 0) == policy.group_of("b", b"o", 0) != policy.group_of("a", None, 0)  # fmt: skip


def test_failover_groups_by_partition():
    policy = DispatchPolicy("Failover", batch_size=10, max_concurrency=4)
    groups = [policy.group_of("k", None, p) for p in (0, 0, 1, 2)]
    assert groups == [0, 0, 1, 2]
    assert policy.next_batch(groups, busy={0, 2}) == [2]


def test_no_more_batches_start_than_the_maximum_concurrency():
    policy = DispatchPolicy("Shared", max_concurrency=2)
    assert [policy.may_start(n) for n in range(4)] == [True, True, False, False]


@pytest.mark.parametrize("kind", ["Key_Shared", "Failover"])
def test_simulated_batches_never_share_a_group_in_flight_and_keep_each_groups_order(kind):
    rng = random.Random(13)
    policy = DispatchPolicy(kind, batch_size=3, max_concurrency=3)
    messages = [(n, rng.choice("abcd"), rng.randrange(3)) for n in range(60)]
    pending = list(messages)
    in_flight: list[list[tuple[int, str, int]]] = []
    sent: list[tuple[int, str, int]] = []
    group = lambda m: policy.group_of(m[1], None, m[2])  # noqa: E731
    while pending or in_flight:
        while policy.may_start(len(in_flight)):
            busy = {group(m) for batch in in_flight for m in batch}
            chosen = policy.next_batch([group(m) for m in pending], busy)
            if not chosen:
                break
            batch = [pending[i] for i in chosen]
            pending = [m for i, m in enumerate(pending) if i not in chosen]
            in_flight.append(batch)
            sent += batch
        assert len(in_flight) <= 3
        groups_in_flight = [{group(m) for m in batch} for batch in in_flight]
        assert sum(len(g) for g in groups_in_flight) == len(set().union(*groups_in_flight))
        in_flight.pop(rng.randrange(len(in_flight)))  # batches finish in any order
    for g in {group(m) for m in messages}:
        order = [m[0] for m in sent if group(m) == g]
        assert order == sorted(order)
    assert sorted(sent) == messages


def test_the_window_waits_for_a_full_batch_until_it_ends_from_the_oldest_publish_time():
    policy = DispatchPolicy("Shared", batch_size=3, batching_window_ms=500)
    assert policy.window_due_ms(2, oldest_publish_ms=1000, now_ms=1200) == 1500
    assert policy.window_due_ms(2, oldest_publish_ms=1000, now_ms=1500) is None
    assert policy.window_due_ms(3, oldest_publish_ms=1000, now_ms=1200) is None
    assert policy.window_due_ms(0, oldest_publish_ms=1000, now_ms=1200) is None
    no_window = DispatchPolicy("Shared", batch_size=3)
    assert no_window.window_due_ms(1, oldest_publish_ms=1000, now_ms=1000) is None


def test_bisecting_splits_in_order_and_refuses_a_single_message():
    assert halves([1, 2, 3, 4, 5]) == ([1, 2, 3], [4, 5])
    assert halves(["a", "b"]) == (["a"], ["b"])
    with pytest.raises(ValueError, match="2 or more"):
        halves([1])


def test_the_second_half_holds_back_the_groups_that_failed_in_the_first():
    send, hold = without_groups(["a2", "b1", "a3", "c1"], {"a"}, lambda m: m[0])
    assert (send, hold) == (["b1", "c1"], ["a2", "a3"])
    assert without_groups(["x"], {None}, lambda m: None) == (["x"], [])


def test_a_policy_refuses_out_of_range_settings():
    with pytest.raises(ValueError):
        DispatchPolicy("Shared", batch_size=0)
    with pytest.raises(ValueError):
        DispatchPolicy("Shared", max_concurrency=0)
