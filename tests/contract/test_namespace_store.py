"""Contract of the namespace store: existence, conditional create and delete, listing by
tenant (memory and DynamoDB adapters)."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import ConditionFailed


@pytest.fixture
def namespaces(stores):
    return stores.namespaces


def test_a_namespace_never_created_does_not_exist_and_a_tenant_without_any_lists_none(namespaces, uid):  # fmt: skip
    assert namespaces.exists(f"t-{uid}/ns") is False
    assert namespaces.list(f"t-{uid}") == []


def test_create_makes_it_exist_once_and_delete_needs_it_to_exist(namespaces, uid):
    namespaces.create(f"t-{uid}/ns")
    assert namespaces.exists(f"t-{uid}/ns") is True
    with pytest.raises(ConditionFailed):
        namespaces.create(f"t-{uid}/ns")
    namespaces.delete(f"t-{uid}/ns")
    assert namespaces.exists(f"t-{uid}/ns") is False
    with pytest.raises(ConditionFailed):
        namespaces.delete(f"t-{uid}/ns")
    namespaces.create(f"t-{uid}/ns")  # again, from scratch
    assert namespaces.exists(f"t-{uid}/ns") is True


def test_list_names_the_tenants_namespaces_sorted_and_no_other_tenants(namespaces, uid):
    for name in (f"t-{uid}/b", f"t-{uid}/a", f"t-{uid}x/c", f"u-{uid}/d"):
        namespaces.create(name)
    assert namespaces.list(f"t-{uid}") == [f"t-{uid}/a", f"t-{uid}/b"]
    assert namespaces.list(f"t-{uid}x") == [f"t-{uid}x/c"]


def test_namespace_records_are_not_topics_of_any_namespace(stores, uid):
    stores.namespaces.create(f"t-{uid}/ns")
    assert stores.topics.list(f"persistent://t-{uid}/ns") == []
