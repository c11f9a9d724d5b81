"""Tenants, namespaces and permissions on the emulator: the HTTP routes through the local
gateway to the DynamoDB adapters, and topics only inside a namespace that exists."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from edge_http import assert_error, call  # noqa: E402


def test_a_tenant_namespace_and_grants_live_and_die_together_through_the_routes(local_stack):
    api, tenant = f"{local_stack.url}/admin/v2", f"it-{uuid.uuid4().hex[:8]}"
    assert call(f"{api}/clusters", "GET")[:2] == (200, ["magnetar"])
    assert "public" in call(f"{api}/tenants", "GET")[1]  # from the start
    assert_error(call(f"{api}/tenants/{tenant}", "PUT", body=b"{}"), 412, "PreconditionFailed", "Clusters can not be empty")  # fmt: skip
    assert call(f"{api}/tenants/{tenant}", "PUT", body=b'{"allowedClusters": ["magnetar"]}')[0] == 204  # fmt: skip
    assert call(f"{api}/namespaces/{tenant}/orders", "PUT")[0] == 204
    assert_error(call(f"{api}/namespaces/{tenant}/orders", "PUT"), 409, "Conflict", "Namespace already exists")  # fmt: skip
    grant = call(f"{api}/namespaces/{tenant}/orders/permissions/app", "POST", body=b'["produce"]')
    assert grant[0] == 204
    sub = f"{api}/namespaces/{tenant}/orders/permissions/subscription/billing"
    assert call(sub, "POST", body=b'["app"]')[0] == 204
    policies = call(f"{api}/namespaces/{tenant}/orders", "GET")[1]
    assert policies["auth_policies"]["namespace_auth"] == {"app": ["produce"]}
    assert policies["auth_policies"]["subscription_auth_roles"] == {"billing": ["app"]}

    data = f"{local_stack.url}/v1/persistent/{tenant}"
    produce = b'{"messages": [{"payload": "YWJj"}]}'
    assert_error(call(f"{data}/nope/t/messages", body=produce), 404, "TopicNotFound", "Namespace does not exist")  # fmt: skip
    assert call(f"{data}/orders/t/messages", body=produce)[0] == 200
    topics = call(f"{api}/namespaces/{tenant}/orders/topics", "GET")[1]
    assert topics == [f"persistent://{tenant}/orders/t"]

    assert_error(call(f"{api}/tenants/{tenant}", "DELETE"), 409, "Conflict", "active namespaces")
    assert_error(call(f"{api}/namespaces/{tenant}/orders", "DELETE"), 409, "Conflict", "non empty")
    assert call(f"{api}/tenants/{tenant}?force=true", "DELETE")[0] == 204
    assert tenant not in call(f"{api}/tenants", "GET")[1]
    assert_error(call(f"{api}/namespaces/{tenant}/orders/permissions", "GET"), 404, "NotFound", "Namespace does not exist")  # fmt: skip
