"""services.authorization: grants loaded through the ports, cached per process for a
short time (time passed in), judged by Pulsar's rules; superusers come from settings."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.security import (
    AuthAction,
    AuthorizationError,
    NamespacePermissions,
    Produce,
    Role,
    SuperuserOnly,
    TenantAdmin,
    TenantInfo,
    Unclassified,
)
from magnetar_core.engine import security_of
from magnetar_core.services.authorization import Authorization
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://acme/orders/t")
APP, ADMIN, ROOT = Role("app"), Role("acme-admin"), Role("root")


class CountingStores:
    """The memory tenant and permission stores, counting their reads."""

    def __init__(self) -> None:
        stores = memory_stores()
        self.tenants, self.permissions = stores.tenants, stores.permissions
        self.reads = 0
        self.tenants.put("acme", TenantInfo(admin_roles=frozenset({ADMIN})))

    def grant(self, role: Role, *actions: AuthAction) -> None:
        current = self.permissions.get("acme/orders")
        self.permissions.put("acme/orders", current.grant(role, actions))

    def revoke(self, role: Role) -> None:
        current = self.permissions.get("acme/orders")
        self.permissions.put("acme/orders", current.revoke(role))

    def authorization(self, cache_ms: int) -> Authorization:
        outer = self

        class Tenants:
            def get(self, tenant: str) -> TenantInfo | None:
                outer.reads += 1
                return outer.tenants.get(tenant)

        class Permissions:
            def get(self, namespace: str) -> NamespacePermissions:
                outer.reads += 1
                return outer.permissions.get(namespace)

        return Authorization(Tenants(), Permissions(), {ROOT}, cache_ms)  # type: ignore[arg-type]


def test_a_granted_role_may_produce_and_an_ungranted_one_gets_a_403_naming_the_fix():
    stores = CountingStores()
    stores.grant(APP, AuthAction.PRODUCE)
    authorization = stores.authorization(cache_ms=0)
    assert authorization.enforce(APP, Produce(TOPIC), now_ms=0).allowed
    with pytest.raises(AuthorizationError) as denied:
        authorization.enforce(Role("stranger"), Produce(TOPIC), now_ms=0)
    assert denied.value.status == 403
    assert "Role 'stranger' is not authorized to produce to persistent://acme/orders/t" in str(
        denied.value
    )
    assert "grant-permission acme/orders --role stranger --actions produce" in str(denied.value)


def test_the_tenant_admin_administers_its_tenant_and_nobody_elses():
    authorization = CountingStores().authorization(cache_ms=0)
    assert authorization.decide(ADMIN, TenantAdmin("acme", "create topic t"), 0).allowed
    assert not authorization.decide(ADMIN, TenantAdmin("other", "create topic t"), 0).allowed


def test_a_superuser_is_allowed_without_reading_any_grant_but_never_an_unclassified_route():
    stores = CountingStores()
    authorization = stores.authorization(cache_ms=0)
    assert authorization.decide(ROOT, Produce(TOPIC), 0).allowed
    assert authorization.decide(ROOT, SuperuserOnly("check the broker's health"), 0).allowed
    assert stores.reads == 0
    assert not authorization.decide(ROOT, Unclassified("GET", "/nowhere"), 0).allowed
    assert not authorization.decide(APP, SuperuserOnly("list the tenants"), 0).allowed


def test_grants_are_reused_within_the_cache_time_and_read_again_after_it():
    stores = CountingStores()
    stores.grant(APP, AuthAction.PRODUCE)
    authorization = stores.authorization(cache_ms=1_000)
    assert authorization.decide(APP, Produce(TOPIC), now_ms=10_000).allowed
    reads = stores.reads
    stores.revoke(APP)
    assert authorization.decide(APP, Produce(TOPIC), now_ms=10_999).allowed  # cached
    assert stores.reads == reads
    assert not authorization.decide(APP, Produce(TOPIC), now_ms=11_000).allowed  # expired
    assert stores.reads == reads + 2  # the tenant and the namespace, once each


def test_a_zero_cache_time_reads_the_grants_on_every_request():
    stores = CountingStores()
    stores.grant(APP, AuthAction.PRODUCE)
    authorization = stores.authorization(cache_ms=0)
    assert authorization.decide(APP, Produce(TOPIC), now_ms=5).allowed
    stores.revoke(APP)
    assert not authorization.decide(APP, Produce(TOPIC), now_ms=5).allowed


def test_security_from_settings_has_the_superusers_and_reads_the_secret_key_reference():
    settings = memory_settings(
        authentication_enabled=True,
        superuser_roles=("root", "ops"),
        token_secret_key="data:;base64,c2VjcmV0LWtleS1vZi0zMi1ieXRlcy1mb3ItdGVzdHM=",
    )
    security = security_of(settings, memory_stores())
    assert security.enabled
    assert security.authorization.superusers == {Role("root"), Role("ops")}
    assert (
        security.keys is not None
        and security.keys.secret_key == b"secret-key-of-32-bytes-for-tests"
    )


def test_security_off_reads_no_key_even_when_the_reference_is_broken():
    settings = memory_settings(token_secret_key="file:///no/such/key")
    security = security_of(settings, memory_stores())
    assert (security.enabled, security.keys) == (False, None)
