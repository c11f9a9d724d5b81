"""``magnetar admin`` (pulsar-admin's verbs) against the embedded stack."""

from __future__ import annotations

import uuid

from magnetar.cli.main import main


def admin(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["admin", "--service-url", url, *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_tenant_admin_sets_up_a_namespace_grants_and_tears_it_down_with_the_cli(local_stack, capsys):  # fmt: skip
    url, tenant = local_stack.url, f"cli-{uuid.uuid4().hex[:8]}"
    assert admin(capsys, url, "clusters", "list") == (0, "magnetar\n", "")
    assert admin(capsys, url, "tenants", "create", tenant, "-r", "acme-admin")[0] == 0
    status, out, _ = admin(capsys, url, "tenants", "get", tenant)  # a table for people
    assert status == 0 and out.split() == ["KEY", "VALUE", "adminRoles", "acme-admin", "allowedClusters", "magnetar"]  # fmt: skip
    assert admin(capsys, url, "namespaces", "create", f"{tenant}/orders")[0] == 0
    assert admin(capsys, url, "namespaces", "list", tenant) == (0, f"{tenant}/orders\n", "")
    grant = ("namespaces", "grant-permission", f"{tenant}/orders", "--role", "app",
             "--actions", "produce,consume")  # fmt: skip
    assert admin(capsys, url, *grant)[0] == 0
    status, out, _ = admin(capsys, url, "namespaces", "permissions", f"{tenant}/orders", "-o", "json")  # fmt: skip
    assert (status, out.split()) == (0, ["{", '"app":', "[", '"consume",', '"produce"', "]", "}"])
    revoke = ("namespaces", "revoke-permission", f"{tenant}/orders", "--role", "app")
    assert admin(capsys, url, *revoke)[0] == 0

    status, _, err = admin(capsys, url, "tenants", "delete", tenant)
    assert status == 1 and err.startswith("error: Conflict: The tenant still has active namespaces")
    assert admin(capsys, url, "tenants", "delete", tenant, "-f")[0] == 0
    status, _, err = admin(capsys, url, "tenants", "get", tenant)
    assert status == 1 and "Tenant does not exist" in err
