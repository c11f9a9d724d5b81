"""Ports: security (issue 12): tenants, namespace permissions and policies, secrets, callers.

See ``magnetar_core.ports`` for the conventions (keys, times, errors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from magnetar_core.domain.policies import NamespacePolicies
from magnetar_core.domain.security.model import NamespacePermissions, TenantInfo


class TenantStore(Protocol):
    """Tenants (Pulsar's TenantInfo), one versioned record per tenant name."""

    def get(self, tenant: str) -> TenantInfo | None:
        """The tenant's info (its ``version`` the stored one), strongly consistent; None
        when there is no such tenant."""
        ...

    def list(self) -> list[str]:
        """Every tenant's name, sorted."""
        ...

    def put(self, tenant: str, info: TenantInfo) -> TenantInfo:
        """Write ``info`` if the stored record is still at ``info.version`` (0: only if the
        tenant does not exist); returns what was stored (version + 1). Raises
        ConditionFailed when someone created or changed it first."""
        ...

    def delete(self, tenant: str, info: TenantInfo) -> None:
        """Delete the tenant if still at ``info.version``; raises ConditionFailed when it
        changed since read (version 0: succeeds only if it does not exist)."""
        ...


class PermissionStore(Protocol):
    """Namespace permissions (Pulsar's AuthPolicies of ``tenant/namespace``: namespace,
    topic and subscription grants), one versioned record per namespace."""

    def get(self, namespace: str) -> NamespacePermissions:
        """The namespace's permissions, strongly consistent (none granted, version 0, when
        none were written)."""
        ...

    def put(self, namespace: str, permissions: NamespacePermissions) -> NamespacePermissions:
        """Replace the permissions if still at ``permissions.version``; returns what was
        stored (version + 1). Raises ConditionFailed when someone wrote first."""
        ...

    def delete(self, namespace: str, permissions: NamespacePermissions) -> None:
        """Delete the namespace's permissions if still at ``permissions.version`` (the
        namespace is deleted); raises ConditionFailed when they changed since read."""
        ...


class NamespaceStore(Protocol):
    """The namespaces that exist (``tenant/namespace``), one record each, listed by tenant.
    A namespace's policies and permissions are records of their own (PolicyStore,
    PermissionStore); this one says only that it exists."""

    def exists(self, namespace: str) -> bool:
        """Whether the namespace exists (strongly consistent)."""
        ...

    def list(self, tenant: str) -> list[str]:
        """The namespaces of ``tenant`` as ``tenant/namespace``, sorted."""
        ...

    def create(self, namespace: str) -> None:
        """Record the namespace; raises ConditionFailed when it exists."""
        ...

    def delete(self, namespace: str) -> None:
        """Remove the namespace's record; raises ConditionFailed when there is none."""
        ...


# Authentication (issue 12): where token keys are kept and who an IAM token's caller is.


class SecretParameters(Protocol):
    """Named secrets, decrypted (SSM Parameter Store SecureStrings; Secrets Manager secrets
    through SSM's ``/aws/reference/secretsmanager/<secret id>`` names)."""

    def read(self, name: str) -> str:
        """The decrypted value of parameter ``name``. Raises InvalidKey (of
        ``magnetar_wire.token_keys``) when there is no such parameter or it cannot be read
        (access denied, its KMS key disabled), naming the parameter."""
        ...


class CallerIdentity(Protocol):
    """Who signed a presigned ``sts:GetCallerIdentity`` call (``domain.security.iam``)."""

    def caller_arn(self, url: str, headers: Mapping[str, str]) -> str:
        """Send the presigned call (GET ``url`` with ``headers``); the caller's ARN.
        Raises BadSignature (of ``magnetar_wire.tokens``, 401) when STS refuses it
        (signature, expiry, audience header), StorageFault when STS cannot be reached."""
        ...


# Triggers (issue 13): stored triggers and the targets they deliver to.


class PolicyStore(Protocol):
    """Namespace policies (``tenant/namespace``), one versioned record per namespace."""

    def get(self, namespace: str) -> NamespacePolicies:
        """The namespace's policies (all unset, version 0, when none were written)."""
        ...

    def put(self, namespace: str, policies: NamespacePolicies) -> NamespacePolicies:
        """Replace the policies if still at ``policies.version``; returns what was stored
        (version + 1). Raises ConditionFailed when someone wrote first."""
        ...
