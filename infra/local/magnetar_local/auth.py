"""``magnetar local --auth``: token authentication on the local stack, as Pulsar standalone
with ``authenticationEnabled``.

``LocalAuth.prepare(state_dir, secret_key, superuser_roles)`` makes the secret key file when
it is missing (32 random bytes, mode 0600, as ``magnetar tokens create-secret-key``), creates
the first superuser role's token (no expiry) and writes it to ``<state dir>/local.token``
(0600), in the state folder beside the services' records, where the ``magnetar`` CLI finds it. ``environment`` is what
the handlers then see: authentication on, the superusers, the key as ``file://``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from magnetar.cli.service_url import TOKEN_FILE
from magnetar_wire import token_keys, tokens

DEFAULT_SUPERUSER = "admin"
SECRET_KEY_FILE = "secret.key"
PRIVATE_FILE_MODE = 0o600

AUTH_OFF = {"AUTHENTICATION_ENABLED": "false", "TOKEN_KEY_PARAMETER": "", "BASIC_AUTH_SECRET": "",
            "OAUTH2_ISSUER": ""}  # fmt: skip
"""The handlers' environment without ``--auth`` (whatever template.yaml's defaults say)."""


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, readable and writable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, PRIVATE_FILE_MODE)


@dataclass(frozen=True)
class LocalAuth:
    """The local stack's token authentication: the secret key's file, the superuser roles
    (the first one's ``token`` is the stack's own), the token file written."""

    secret_key_file: Path
    superuser_roles: tuple[str, ...]
    token: str
    token_file: Path
    anonymous_role: str | None = None
    """``--anonymous-role``: the role of requests without credentials (Pulsar's
    ``anonymousUserRole``); None: they are refused (401)."""
    htpasswd_file: Path | None = None
    """``--htpasswd``: Basic authentication's users (``AuthenticationProviderBasic``)."""
    tls_client_auth: bool = False
    """A client certificate the listener verified proves its CN (``--tls-trust-certs``)."""
    oauth2_issuer: str | None = None
    """``--oauth2-issuer``: the OAuth 2.0 issuer whose access tokens prove roles."""
    oauth2_jwks: str | None = None
    """``--oauth2-jwks``: its JWKS, a URL or a file's ``file://`` URL (None: the issuer's
    ``/.well-known/jwks.json``)."""
    oauth2_audience: str | None = None
    """``--oauth2-audience``: the ``aud`` access tokens must hold (None: not checked)."""

    @classmethod
    def prepare(
        cls,
        state_dir: Path,
        secret_key: Path | None = None,
        superuser_roles: Sequence[str] = (DEFAULT_SUPERUSER,),
    ) -> LocalAuth:
        """Create the key file if missing (default ``<state_dir>/secret.key``), the first
        superuser's token, and ``<state_dir>/local.token``. Raises ValueError for no
        superuser role, InvalidKey for an empty key file, OSError when a file cannot be
        written."""
        roles = tuple(r.strip() for r in superuser_roles if r.strip())
        if not roles:
            raise ValueError("--superuser-roles needs at least one role")
        state_dir.mkdir(parents=True, exist_ok=True)
        key_file = (secret_key or state_dir / SECRET_KEY_FILE).resolve()
        if not key_file.exists():
            key_file.parent.mkdir(parents=True, exist_ok=True)
            write_private(key_file, token_keys.new_secret_key())
        signing = tokens.SigningKey.secret(key_file.read_bytes())
        token = tokens.create(signing, roles[0])
        token_file = state_dir / TOKEN_FILE
        write_private(token_file, token.encode() + b"\n")
        return cls(key_file, roles, token, token_file)

    def with_providers(self, anonymous_role: str | None = None, htpasswd_file: Path | None = None,
                       tls_client_auth: bool = False, oauth2_issuer: str | None = None,
                       oauth2_jwks: str | None = None,
                       oauth2_audience: str | None = None) -> LocalAuth:  # fmt: skip
        """These settings with Pulsar's other providers: the anonymous role, Basic users of
        an htpasswd file (checked now: it must read as one; raises InvalidKey, OSError),
        client certificates, an OAuth 2.0 issuer (``oauth2_jwks``: a URL or a file path;
        ValueError for a JWKS without an issuer)."""
        if oauth2_jwks and not oauth2_issuer:
            raise ValueError("--oauth2-jwks needs --oauth2-issuer")
        if oauth2_jwks and "://" not in oauth2_jwks:
            oauth2_jwks = Path(oauth2_jwks).resolve().as_uri()
        if htpasswd_file is not None:
            from magnetar_core.services.basic_auth import parse_htpasswd

            htpasswd_file = htpasswd_file.resolve()
            parse_htpasswd(htpasswd_file.read_text(encoding="utf-8"))
        role = anonymous_role.strip() if anonymous_role else None
        return replace(self, anonymous_role=role or None, htpasswd_file=htpasswd_file,
                       tls_client_auth=tls_client_auth, oauth2_issuer=oauth2_issuer or None,
                       oauth2_jwks=oauth2_jwks or None,
                       oauth2_audience=oauth2_audience or None)  # fmt: skip

    @property
    def environment(self) -> dict[str, str]:
        """The handlers' environment: authentication on with this key and these roles."""
        return {
            "AUTHENTICATION_ENABLED": "true",
            "SUPERUSER_ROLES": ",".join(self.superuser_roles),
            "TOKEN_SECRET_KEY": self.secret_key_file.as_uri(),
            "TOKEN_PUBLIC_KEY": "",
            "TOKEN_KEY_PARAMETER": "",
            "ANONYMOUS_USER_ROLE": self.anonymous_role or "",
            "BASIC_AUTH_HTPASSWD": self.htpasswd_file.as_uri() if self.htpasswd_file else "",
            "BASIC_AUTH_SECRET": "",
            "TLS_CLIENT_AUTHENTICATION": "true" if self.tls_client_auth else "false",
            "OAUTH2_ISSUER": self.oauth2_issuer or "",
            "OAUTH2_JWKS_URL": self.oauth2_jwks or "",
            "OAUTH2_AUDIENCE": self.oauth2_audience or "",
        }

    def remove_token_file(self) -> None:
        """Remove the token file when the stack stops (missing is fine)."""
        self.token_file.unlink(missing_ok=True)
