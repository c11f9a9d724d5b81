"""Contract of the topic store: conditional creates and updates, tombstones, listing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.retention import RetentionPolicies
from magnetar_core.domain.topic import ACTIVE, DELETED, TopicMeta
from magnetar_wire.names import TopicName


def meta(name: str, version: int = 1, **fields) -> TopicMeta:
    return TopicMeta(TopicName.parse(name), 1, 0, ACTIVE, version, 1_700_000_000_000, **fields)


def test_an_unknown_topic_reads_as_none(stores, uid):
    assert stores.topics.get(TopicName.parse(f"persistent://c/ns-{uid}/t")) is None


def test_a_created_topic_reads_back_with_every_field(stores, uid):
    plain = meta(f"persistent://c/ns-{uid}/plain")
    full = meta(
        f"persistent://c/ns-{uid}/full",
        deduplication=False,
        retention=RetentionPolicies(60, 10),
        message_ttl_seconds=30,
        terminated=frozenset({-1, 2}),
    )
    for m in (plain, full):
        stores.topics.put(m, None)
        assert stores.topics.get(m.name) == m


def test_creating_a_topic_that_exists_fails_the_condition(stores, uid):
    first = meta(f"persistent://c/ns-{uid}/t")
    stores.topics.put(first, None)
    with pytest.raises(ConditionFailed):
        stores.topics.put(replace(first, ledger_id=2), None)
    assert stores.topics.get(first.name) == first


def test_an_update_needs_the_version_it_read(stores, uid):
    first = meta(f"persistent://c/ns-{uid}/t")
    stores.topics.put(first, None)
    second = replace(first, partitions=3, version=2)
    stores.topics.put(second, first)
    with pytest.raises(ConditionFailed):
        stores.topics.put(replace(first, partitions=5, version=2), first)  # stale previous
    assert stores.topics.get(first.name) == second


def test_an_update_of_a_topic_that_never_existed_fails_the_condition(stores, uid):
    ghost = meta(f"persistent://c/ns-{uid}/ghost")
    with pytest.raises(ConditionFailed):
        stores.topics.put(replace(ghost, version=2), ghost)
    assert stores.topics.get(ghost.name) is None


def test_list_names_the_active_topics_of_one_namespace_by_name(stores, uid):
    ns = f"persistent://c/ns-{uid}"
    for local in ("b", "a", "c"):
        stores.topics.put(meta(f"{ns}/{local}"), None)
    gone = meta(f"{ns}/d")
    stores.topics.put(gone, None)
    stores.topics.put(replace(gone, state=DELETED, version=2), gone)
    stores.topics.put(meta(f"persistent://c/other-{uid}/x"), None)
    stores.topics.put(meta(f"non-persistent://c/ns-{uid}/np"), None)
    assert [m.name.local for m in stores.topics.list(ns)] == ["a", "b", "c"]
    assert stores.topics.get(gone.name).state == DELETED  # the tombstone stays readable


def test_list_skips_the_namespace_policies_item(stores, uid):
    stores.policies.put(f"c/ns-{uid}", stores.policies.get(f"c/ns-{uid}"))
    stores.topics.put(meta(f"persistent://c/ns-{uid}/t"), None)
    assert [m.name.local for m in stores.topics.list(f"persistent://c/ns-{uid}")] == ["t"]


def test_list_of_an_empty_namespace_is_empty(stores, uid):
    assert stores.topics.list(f"persistent://c/empty-{uid}") == []
