"""Contract of the tenant store: absent tenants, versioned create/update/delete, listing."""

from __future__ import annotations

import pytest
from security_backends import security_stores

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.security import Role, TenantInfo


@pytest.fixture
def tenants(backend, request):
    return security_stores(backend, request).tenants


ACME = TenantInfo(frozenset({Role("acme-admin"), Role("ops")}), frozenset({"magnetar"}))


def test_a_tenant_never_created_reads_as_none(tenants, uid):
    assert tenants.get(f"t-{uid}") is None


def test_create_stores_the_admin_roles_and_clusters_at_version_1(tenants, uid):
    stored = tenants.put(f"t-{uid}", ACME)
    assert stored == ACME.with_version(1)
    assert tenants.get(f"t-{uid}") == stored


def test_a_tenant_with_no_admins_or_clusters_reads_back_empty(tenants, uid):
    assert tenants.put(f"t-{uid}", TenantInfo()) == TenantInfo(version=1)
    assert tenants.get(f"t-{uid}") == TenantInfo(version=1)


def test_create_fails_when_the_tenant_exists_and_update_needs_the_version_read(tenants, uid):
    first = tenants.put(f"t-{uid}", ACME)
    with pytest.raises(ConditionFailed):
        tenants.put(f"t-{uid}", TenantInfo())  # version 0: create only
    second = tenants.put(f"t-{uid}", TenantInfo(frozenset({Role("new")}), version=first.version))
    assert second.version == 2 and second.admin_roles == {Role("new")}
    with pytest.raises(ConditionFailed):
        tenants.put(f"t-{uid}", first)  # stale
    assert tenants.get(f"t-{uid}") == second


def test_delete_needs_the_version_read_and_then_the_tenant_is_gone(tenants, uid):
    stored = tenants.put(f"t-{uid}", ACME)
    with pytest.raises(ConditionFailed):
        tenants.delete(f"t-{uid}", ACME)  # version 0: not what is stored
    tenants.delete(f"t-{uid}", stored)
    assert tenants.get(f"t-{uid}") is None
    assert f"t-{uid}" not in tenants.list()
    assert tenants.put(f"t-{uid}", ACME).version == 1  # created again from scratch


def test_list_names_every_tenant_sorted(tenants, uid):
    for name in (f"t-{uid}-b", f"t-{uid}-a", f"t-{uid}-c"):
        tenants.put(name, TenantInfo())
    tenants.delete(f"t-{uid}-c", TenantInfo(version=1))
    listed = tenants.list()
    assert listed == sorted(listed)
    assert [t for t in listed if uid in t] == [f"t-{uid}-a", f"t-{uid}-b"]
