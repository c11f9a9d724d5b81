"""Contract of the namespace policy store: defaults, versioned replaces."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.policies import (
    DelayedDeliveryPolicies,
    NamespacePolicies,
    RetentionPolicies,
)


def test_a_namespace_without_policies_reads_as_all_unset_at_version_0(stores, uid):
    assert stores.policies.get(f"c/ns-{uid}") == NamespacePolicies()


def test_put_stores_every_field_and_returns_the_next_version(stores, uid):
    ns = f"c/ns-{uid}"
    wanted = NamespacePolicies(
        deduplication=True,
        max_message_size_bytes=1024,
        delayed_delivery=DelayedDeliveryPolicies(True, 500, 60_000),
        retention=RetentionPolicies(10, -1),
        message_ttl_seconds=120,
        schema_compatibility_strategy="BACKWARD",
        allow_auto_update_schema=False,
        schema_validation_enforced=True,
    )
    stored = stores.policies.put(ns, wanted)
    assert stored == wanted.with_changes(version=1)
    assert stores.policies.get(ns) == stored


def test_put_needs_the_version_it_read(stores, uid):
    ns = f"c/ns-{uid}"
    first = stores.policies.put(ns, NamespacePolicies(deduplication=True))
    with pytest.raises(ConditionFailed):
        stores.policies.put(ns, NamespacePolicies(deduplication=False))  # version 0: stale
    second = stores.policies.put(ns, first.with_changes(deduplication=False))
    assert second.version == 2
    with pytest.raises(ConditionFailed):
        stores.policies.put(ns, first.with_changes(max_message_size_bytes=1))
    assert stores.policies.get(ns) == second


def test_put_at_a_version_never_written_fails_the_condition(stores, uid):
    with pytest.raises(ConditionFailed):
        stores.policies.put(f"c/ns-{uid}", NamespacePolicies(version=3))
    assert stores.policies.get(f"c/ns-{uid}") == NamespacePolicies()


def test_unset_fields_read_back_unset(stores, uid):
    ns = f"c/ns-{uid}"
    first = stores.policies.put(ns, NamespacePolicies(deduplication=True, message_ttl_seconds=5))
    cleared = stores.policies.put(ns, first.with_changes(message_ttl_seconds=None))
    assert stores.policies.get(ns) == cleared and cleared.message_ttl_seconds is None
