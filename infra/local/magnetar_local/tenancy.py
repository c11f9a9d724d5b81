"""Namespaces for tests and tours: topics exist only inside an existing namespace (as in
Pulsar), so a test using ``acme/orders`` creates it first, with its tenant.

``ensure_namespaces(engine, "acme/orders", ...)`` on an engine (in-memory or emulator);
``ensure_namespaces_at(url, ...)`` through the HTTP admin API of a running service. Both
create a missing tenant allowed on the deployment's cluster, and leave existing tenants and
namespaces as they are. ``initialize_cluster`` creates ``public/default`` on the local
stack's emulator before its handlers run.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from magnetar_core.domain.errors import Conflict
from magnetar_core.engine import Engine

__all__ = ["ensure_namespaces", "ensure_namespaces_at", "initialize_cluster"]


def ensure_namespaces(engine: Engine, *namespaces: str) -> None:
    """Create each ``tenant/namespace`` (and its tenant) that does not exist yet."""
    for name in namespaces:
        tenant, _, local = name.partition("/")
        with contextlib.suppress(Conflict):
            engine.tenants.create(tenant, {"allowedClusters": engine.tenants.clusters()})
        with contextlib.suppress(Conflict):
            engine.namespace_admin.create(tenant, local, None)


def _put(url: str, body: object, timeout_s: float) -> None:
    """PUT a JSON body; 204 and 409 (exists) are both fine, anything else raises."""
    data = json.dumps(body).encode() if body is not None else b""
    request = urllib.request.Request(
        url, data=data, method="PUT", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):
            return
    except urllib.error.HTTPError as exc:
        if exc.code != 409:
            raise


def _clusters(base_url: str, timeout_s: float) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/admin/v2/clusters", timeout=timeout_s) as resp:
        return json.loads(resp.read())


def ensure_namespaces_at(base_url: str, *namespaces: str, timeout_s: float = 10.0) -> None:
    """Create each ``tenant/namespace`` (and its tenant) through the service at
    ``base_url``; raises urllib.error.HTTPError for an answer other than 204 or 409."""
    base_url = base_url.rstrip("/")
    clusters = _clusters(base_url, timeout_s)
    for name in namespaces:
        tenant, _, local = name.partition("/")
        _put(f"{base_url}/admin/v2/tenants/{tenant}", {"allowedClusters": clusters}, timeout_s)
        _put(f"{base_url}/admin/v2/namespaces/{tenant}/{local}", None, timeout_s)


def initialize_cluster(dynamodb: Any, environment: Mapping[str, str]) -> None:
    """Create ``public`` and ``public/default``, as ``pulsar initialize-cluster-metadata``
    does (the engine's registry, on the topics table the handlers' ``environment`` names)."""
    from magnetar_core.adapters.aws.namespaces import NamespaceStore
    from magnetar_core.adapters.aws.security import TenantStore
    from magnetar_core.services.tenancy import Registry
    from magnetar_core.settings import Settings

    settings = Settings.from_env(environment)
    Registry(
        TenantStore(dynamodb, settings.topics_table),
        NamespaceStore(dynamodb, settings.topics_table),
        settings.cluster_name,
    ).initialize()
