"""Authorization of one request: the grants it needs, loaded through the ports and cached
briefly, judged by the domain's ``AuthorizationPolicy`` (Pulsar's rules).

``Authorization.enforce(role, requirement, now_ms)`` raises ``AuthorizationError`` (HTTP 403,
the policy's message: who was refused what, and the command that fixes it) or returns the
allowing ``Decision``. It reads at most two items (the tenant's info, the namespace's
permissions), none for a superuser or for requirements that need no grants; each is kept
per process (one Lambda container) for ``cache_ms`` milliseconds, so a grant or a revoke
takes effect within that time everywhere.

``Security`` is what the HTTP edge needs: whether authentication is on, the keys tokens are
checked with, and the ``Authorization`` (built by the composition root from settings).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from magnetar_core.domain.security import (
    AnyRole,
    AuthorizationPolicy,
    Decision,
    Grants,
    NamespacePermissions,
    Requirement,
    Role,
    SuperuserOnly,
    TenantInfo,
    Unclassified,
)
from magnetar_core.ports import PermissionStore, TenantStore
from magnetar_core.services.credentials import Providers
from magnetar_wire.tokens import VerificationKeys

MAX_CACHED = 4096
"""Cached tenants and namespaces per process; when full, the cache starts over."""
_NO_GRANTS = (SuperuserOnly, AnyRole, Unclassified)
T = TypeVar("T")


class _TimedCache:
    """Values by name, each valid for ``ttl_ms`` after it was loaded (times passed in)."""

    def __init__(self, ttl_ms: int) -> None:
        self._ttl_ms = ttl_ms
        self._values: dict[str, tuple[float, object]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, now_ms: float, load: Callable[[str], T]) -> T:
        """The cached value of ``name`` when loaded less than ``ttl_ms`` before ``now_ms``;
        else ``load(name)``, kept. Raises what ``load`` raises (nothing is kept then)."""
        with self._lock:
            hit = self._values.get(name)
        if hit is not None and 0 <= now_ms - hit[0] < self._ttl_ms:
            return hit[1]  # type: ignore[return-value]
        value = load(name)
        if self._ttl_ms > 0:
            with self._lock:
                if len(self._values) >= MAX_CACHED:
                    self._values.clear()
                self._values[name] = (now_ms, value)
        return value


class Authorization:
    """Pulsar's authorization on the stores: ``superusers`` may do anything; the rest
    needs tenant admin roles or grants (``domain.security.policy``). ``cache_ms``: how long
    loaded grants are reused (0: never)."""

    def __init__(
        self,
        tenants: TenantStore,
        permissions: PermissionStore,
        superusers: Iterable[Role] = (),
        cache_ms: int = 1_000,
    ) -> None:
        self._tenants = tenants
        self._permissions = permissions
        self.policy = AuthorizationPolicy(frozenset(superusers))
        self._tenant_cache = _TimedCache(cache_ms)
        self._permission_cache = _TimedCache(cache_ms)

    @property
    def superusers(self) -> frozenset[Role]:
        return self.policy.superusers

    def decide(self, role: Role, requirement: Requirement, now_ms: float) -> Decision:
        """Whether ``role`` meets ``requirement`` at ``now_ms`` (epoch ms, for the cache).
        Raises StorageFault when the grants cannot be read."""
        if isinstance(requirement, _NO_GRANTS) or role in self.superusers:
            return self.policy.allows(role, requirement, Grants())
        return self.policy.allows(role, requirement, self.grants_for(requirement, now_ms))

    def enforce(self, role: Role, requirement: Requirement, now_ms: float) -> Decision:
        """``decide``, raising AuthorizationError (403, nothing done) when denied."""
        decision = self.decide(role, requirement, now_ms)
        decision.enforce()
        return decision

    def grants_for(self, requirement: Requirement, now_ms: float) -> Grants:
        """The tenant's info and the namespace's permissions ``requirement`` concerns (from
        the cache when fresh)."""
        tenant, namespace = requirement.tenant, requirement.namespace
        info: TenantInfo | None = None
        if tenant is not None:
            info = self._tenant_cache.get(tenant, now_ms, self._tenants.get)
        permissions = NamespacePermissions()
        if namespace is not None:
            permissions = self._permission_cache.get(namespace, now_ms, self._permissions.get)
        return Grants(tenant, info, namespace, permissions)


@dataclass(frozen=True)
class Security:
    """The edge's security: ``enabled`` (off: every request is the anonymous role, allowed
    everything, as Pulsar with authentication off), ``keys`` tokens are verified with
    (None: none configured, so no token is valid), the ``authorization``, and the other
    ``providers`` (Basic, client certificates, the anonymous role)."""

    enabled: bool
    keys: VerificationKeys | None
    authorization: Authorization
    providers: Providers = field(default_factory=Providers)
