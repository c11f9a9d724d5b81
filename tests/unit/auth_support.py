"""Tokens, keys and a MemoryService with authentication on, for the auth tests."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager

from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role, TenantInfo
from magnetar_local.memory_service import MemoryService, memory_settings
from magnetar_wire import tokens

SECRET = b"edge-tests-secret-key-32-bytes!!"
OTHER_SECRET = b"another-secret-key-of-32-bytes!!"
SUPERUSER = "admin"


def token(role: str, secret: bytes = SECRET, expires_at_s: int | None = None) -> str:
    """A Pulsar token of ``role`` signed with ``secret``."""
    return tokens.create(tokens.SigningKey.secret(secret), role, expires_at_s)


def tampered(role: str, as_role: str) -> str:
    """``role``'s valid token with its claims replaced by ``{"sub": as_role}`` (the
    signature kept)."""
    header, _, signature = token(role).split(".")
    claims = base64.urlsafe_b64encode(f'{{"sub":"{as_role}"}}'.encode()).rstrip(b"=").decode()
    return f"{header}.{claims}.{signature}"


def bearer(role: str, **kwargs: object) -> dict[str, str]:
    """The ``Authorization`` header of ``role``'s token."""
    return {"Authorization": f"Bearer {token(role, **kwargs)}"}  # type: ignore[arg-type]


def secret_reference(secret: bytes = SECRET) -> str:
    return "data:;base64," + base64.b64encode(secret).decode()


@contextmanager
def auth_service(**grants: list[str]) -> Iterator[MemoryService]:
    """A MemoryService with authentication on (superuser ``admin``, grants read on every
    request), tenant ``public`` administered by ``public-admin``, and ``grants``: role ->
    actions on namespace public/default."""
    settings = memory_settings(
        authentication_enabled=True,
        superuser_roles=(SUPERUSER,),
        token_secret_key=secret_reference(),
        authorization_cache_ms=0,
    )
    with MemoryService(settings) as svc:
        public = svc.stores.tenants.get("public") or TenantInfo()  # created at start
        admins = TenantInfo(frozenset({Role("public-admin")}), public.allowed_clusters)
        svc.stores.tenants.put("public", admins.with_version(public.version))
        permissions = svc.stores.permissions.get("public/default") or NamespacePermissions()
        for role, actions in grants.items():
            permissions = permissions.grant(Role(role), [AuthAction(a) for a in actions])
        svc.stores.permissions.put("public/default", permissions)
        yield svc


def snapshot(svc: MemoryService, namespace: str = "public/default") -> dict:
    """What a superuser sees of ``namespace``: topic -> (messages in, subscriptions)."""
    import requests

    base = f"{svc.url}/admin/v2/persistent/{namespace}"
    admin = bearer(SUPERUSER)
    names = requests.get(base, headers=admin, timeout=5).json()
    seen = {}
    for name in names:
        stats = requests.get(
            f"{base}/{name.rsplit('/', 1)[1]}/stats", headers=admin, timeout=5
        ).json()
        seen[name] = (stats["msgInCounter"], sorted(stats["subscriptions"]))
    return seen
