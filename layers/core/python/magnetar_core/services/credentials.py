"""Which of Pulsar's authentication providers proves a request's role, besides tokens.

``Providers.role_of`` picks, for one request:

1. an ``Authorization`` header: ``Basic ...`` goes to the htpasswd users
   (``AuthenticationProviderBasic``; ``services.basic_auth``), a Bearer token of the OAuth
   2.0 issuer (its ``iss``) to ``services.oauth2``, any other to the token check the caller
   passes (Pulsar tokens, IAM tokens);
2. no header, and a client certificate the TLS listener verified (API Gateway's mutual TLS
   on AWS, ``magnetar local --tls-trust-certs`` locally), when TLS authentication is on: the
   certificate's CN (``AuthenticationProviderTls``);
3. no credentials at all: the anonymous role when one is set (Pulsar's
   ``anonymousUserRole``: it gets exactly that role's grants), else the token check's
   MissingToken (401).

Credentials that are sent and do not prove a role are refused (401), never taken as the
anonymous role.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security.model import Role
from magnetar_core.services.basic_auth import HtpasswdSource
from magnetar_core.services.oauth2 import OAuth2Tokens
from magnetar_wire.tokens import AuthenticationError


class BadCertificate(AuthenticationError):
    """The client certificate cannot be read or names no valid role (CN)."""


def certificate_role(pem: str) -> Role:
    """The role of a client certificate (PEM): its subject's common name (CN), as Pulsar's
    ``AuthenticationProviderTls``. Raises BadCertificate."""
    try:
        certificate = x509.load_pem_x509_certificate(pem.encode())
    except ValueError:
        raise BadCertificate("the client certificate is not a PEM X.509 certificate") from None
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names:
        raise BadCertificate("the client certificate's subject has no CN: its CN is the role")
    try:
        return Role(str(names[0].value))
    except InvalidMessage as exc:
        raise BadCertificate(f"the certificate's CN is not a valid role: {exc.message}") from None


def client_certificate(event: Mapping[str, Any]) -> str | None:
    """The PEM of the client certificate a payload 2.0 event's TLS listener verified
    (``requestContext.authentication.clientCert.clientCertPem``, as API Gateway's mutual
    TLS and the local gateway put it); None without one."""
    context = event.get("requestContext") or {}
    authentication = context.get("authentication") if isinstance(context, Mapping) else None
    cert = (authentication or {}).get("clientCert") if isinstance(authentication, Mapping) else None
    pem = cert.get("clientCertPem") if isinstance(cert, Mapping) else None
    return pem if isinstance(pem, str) and pem.strip() else None


@dataclass(frozen=True)
class Providers:
    """The providers besides tokens: ``basic`` (None: Basic headers are refused), ``tls``
    (client certificates prove their CN), ``anonymous`` (the role of requests without
    credentials; None: they are refused), ``oauth2`` (the OAuth 2.0 issuer's access
    tokens; None: every Bearer token is a Pulsar or IAM token)."""

    basic: HtpasswdSource | None = None
    tls: bool = False
    anonymous: Role | None = None
    oauth2: OAuth2Tokens | None = None

    def role_of(self, authorization: str | None, certificate: str | None,
                token_role: Callable[[str | None], Role], now_s: int) -> Role:  # fmt: skip
        """The role of one request's credentials at ``now_s`` (epoch seconds; see the
        module's docstring); raises the AuthenticationError subclasses (401) and InvalidKey
        (the htpasswd file or the issuer's JWKS cannot be read: a deployment fault)."""
        if authorization is not None and authorization.strip():
            scheme, _, rest = authorization.strip().partition(" ")
            if scheme.lower() == "basic" and self.basic is not None:
                return self.basic.role_of(authorization)
            token = rest.strip()
            if scheme.lower() == "bearer" and self.oauth2 is not None and self.oauth2.owns(token):
                return self.oauth2.role_of(token, now_s)
            return token_role(authorization)  # a Basic header without users: MalformedToken
        if self.tls and certificate is not None:
            return certificate_role(certificate)
        if self.anonymous is not None:
            return self.anonymous
        return token_role(authorization)
