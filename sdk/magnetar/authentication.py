"""Authentication providers, named as in pulsar-client; they add an ``Authorization`` header."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable

from ._authentication.oauth2 import fetch_token
from ._authentication.params import basic_params, oauth2_params, plugin_params, read_token_file
from ._validate import check_type
from .exceptions import (
    AuthenticationError,
    ConnectError,
    ErrorGettingAuthenticationData,
    OperationNotSupported,
)

__all__ = [
    "Authentication",
    "AuthenticationAthenz",
    "AuthenticationBasic",
    "AuthenticationOauth2",
    "AuthenticationTLS",
    "AuthenticationToken",
]


class Authentication:
    """Base class, and pulsar-client's generic form ``Authentication(plugin, params)``.

    The plugin names of the methods Magnetar has are those methods: ``tls`` /
    ``org.apache.pulsar.client.impl.auth.AuthenticationTls`` (params
    ``tlsCertFile:<path>,tlsKeyFile:<path>`` or that JSON object), ``token`` /
    ``...AuthenticationToken`` (``token:<token>``, ``file:///path`` or ``{"token": ...}``),
    ``basic`` / ``...AuthenticationBasic`` (``{"username": ..., "password": ...}``). Any other
    plugin is a dynamic library, which Magnetar cannot load: as a pulsar-client whose plugin
    did not load, the client is made but its requests raise ``ConnectError``.
    """

    def __init__(self, dynamicLibPath: str = "", authParamsString: str = "") -> None:  # noqa: N803
        check_type(str, dynamicLibPath, "dynamicLibPath")
        check_type(str, authParamsString, "authParamsString")
        self._unsupported: str | None = None
        self._delegate = _builtin_plugin(dynamicLibPath, authParamsString)
        self._load_error = None if self._delegate is not None else (
            f"the authentication plugin {dynamicLibPath!r} cannot be loaded: Magnetar has no "
            "plugins (dynamic libraries); use AuthenticationToken, AuthenticationBasic, "
            "AuthenticationTLS or AuthenticationOauth2"
        )  # fmt: skip

    def _headers(self) -> dict[str, str]:
        """Headers to add to every request."""
        if self._delegate is None:
            raise ConnectError(self._load_error)
        return self._delegate._headers()

    def _check_supported(self) -> None:
        if getattr(self, "_unsupported", None):
            raise OperationNotSupported(self._unsupported)

    def _client_cert(self) -> tuple[str, str] | None:
        """The client certificate and key files to present in TLS handshakes (None: none)."""
        delegate = getattr(self, "_delegate", None)
        return None if delegate is None else delegate._client_cert()


class AuthenticationToken(Authentication):
    """Bearer token auth, as pulsar-client's: ``token`` is the token, a callable returning
    the current one (called for every request), or ``file:///path`` of a file holding it
    (read for every request, so a rotated token is picked up; surrounding blanks dropped).
    A supplier that raises fails the request with AuthenticationError naming its error (as
    pulsar-client's); an empty token or an unreadable file raises
    ErrorGettingAuthenticationData."""

    def __init__(self, token: str | Callable[[], str]) -> None:
        if not (isinstance(token, str) or callable(token)):
            raise ValueError(
                "Argument token is expected to be of type 'str' or a function returning 'str'"
            )
        self._token = token
        self._unsupported = None

    def _current(self) -> str:
        if callable(self._token):
            try:
                return self._token()
            except Exception as e:  # noqa: BLE001 - the supplier's failure, reported as Pulsar's
                raise AuthenticationError(f"the token supplier failed: {e}") from e
        if self._token.startswith("file://"):
            return read_token_file(self._token)
        return self._token

    def _headers(self) -> dict[str, str]:
        token = self._current()
        if not isinstance(token, str) or not token.strip():
            raise ErrorGettingAuthenticationData("the token is empty")
        return {"Authorization": f"Bearer {token.strip()}"}


class AuthenticationBasic(Authentication):
    """HTTP basic auth, as pulsar-client's: ``AuthenticationBasic(username, password)`` or
    ``AuthenticationBasic(auth_params_string='{"username": ..., "password": ...,
    "method": ...}')`` (then the other arguments are ignored). ``method`` names the broker's
    auth method in Pulsar's binary protocol; over HTTP the header is ``Basic`` whatever it
    is, so it is checked and kept (``self.method``) but changes nothing.

    Raises ValueError: a wrong type, or an ``auth_params_string`` that is not a JSON object
    with string ``username`` and ``password``.
    """

    def __init__(self, username: str | None = None, password: str | None = None,
                 method: str = "basic", auth_params_string: str | None = None) -> None:  # fmt: skip
        if auth_params_string is not None:
            check_type(str, auth_params_string, "auth_params_string")
            username, password, method = basic_params(auth_params_string)
        check_type(str, username, "username")
        check_type(str, password, "password")
        check_type(str, method, "method")
        raw = f"{username}:{password}".encode()
        self._value = "Basic " + base64.b64encode(raw).decode("ascii")
        self.method = method
        self._unsupported = None

    def _headers(self) -> dict[str, str]:
        return {"Authorization": self._value}


class AuthenticationTLS(Authentication):
    """TLS client-certificate auth, as pulsar-client's: the client presents the certificate
    ``certificate_path`` (PEM) with its key ``private_key_path`` in the TLS handshake of an
    ``https://`` service URL; the service's role for it is the certificate's CN (API Gateway
    mutual TLS on AWS, ``magnetar local --tls-trust-certs`` locally). No header is sent.
    Raises ValueError for a path that is not a str."""

    def __init__(self, certificate_path: str, private_key_path: str) -> None:
        check_type(str, certificate_path, "certificate_path")
        check_type(str, private_key_path, "private_key_path")
        self.certificate_path, self.private_key_path = certificate_path, private_key_path
        self._unsupported = None

    def _headers(self) -> dict[str, str]:
        return {}

    def _client_cert(self) -> tuple[str, str]:
        """requests' ``cert``: the certificate and key files presented in the handshake."""
        return self.certificate_path, self.private_key_path


class AuthenticationOauth2(Authentication):
    """OAuth 2.0 client credentials, as pulsar-client's: ``auth_params_string`` is a JSON
    object with ``issuer_url`` and ``private_key`` (required), ``audience`` and ``scope``.
    ``private_key`` locates the credentials JSON (``client_id``, ``client_secret``):
    ``/path``, ``file:///path``, ``file:/path`` or ``data:application/json;base64,...``.

    The first request fetches an access token: the issuer's token endpoint (from
    ``<issuer_url>/.well-known/openid-configuration``) is asked with
    ``grant_type=client_credentials``; the token is sent as ``Authorization: Bearer`` and
    fetched again when 90 % of its ``expires_in`` has passed. A token that cannot be had
    raises ErrorGettingAuthenticationData on the request. Raises ValueError for parameters
    that are not such a JSON object."""

    def __init__(self, auth_params_string: str) -> None:
        check_type(str, auth_params_string, "auth_params_string")
        params = oauth2_params(auth_params_string)
        self.issuer_url: str = params["issuer_url"].rstrip("/")
        self.private_key: str = params["private_key"]
        self.audience: str | None = params.get("audience")
        self.scope: str | None = params.get("scope")
        self._token: tuple[str, float] | None = None  # (access token, refresh at: monotonic s)
        self._lock = threading.Lock()
        self._unsupported = None

    def _headers(self) -> dict[str, str]:
        with self._lock:
            if self._token is None or time.monotonic() >= self._token[1]:
                self._token = self._fetch()
            return {"Authorization": f"Bearer {self._token[0]}"}

    def _fetch(self) -> tuple[str, float]:
        """A new access token and when to fetch again (``magnetar._authentication.oauth2``)."""
        return fetch_token(self.issuer_url, self.private_key, self.audience, self.scope)


class AuthenticationAthenz(Authentication):
    """Athenz auth: not available in Magnetar (raises OperationNotSupported when used).
    Raises ValueError when ``auth_params_string`` is not a str, as pulsar-client does."""

    def __init__(self, auth_params_string: str) -> None:
        check_type(str, auth_params_string, "auth_params_string")
        self._unsupported = (
            "AuthenticationAthenz is not supported by Magnetar; use AuthenticationToken or "
            "AuthenticationBasic"
        )


_PLUGIN_PREFIX = "org.apache.pulsar.client.impl.auth."


def _builtin_plugin(name: str, params: str) -> Authentication | None:
    """The method a plugin name stands for (None: a plugin Magnetar does not have)."""
    short = name.removeprefix(_PLUGIN_PREFIX).lower()
    if short in ("tls", "authenticationtls"):
        p = plugin_params(params)
        return AuthenticationTLS(p.get("tlsCertFile", ""), p.get("tlsKeyFile", ""))
    if short in ("token", "authenticationtoken"):
        if params.startswith("file://"):
            return AuthenticationToken(params)
        token = params.removeprefix("token:") if not params.startswith("{") else None
        return AuthenticationToken(token if token is not None else plugin_params(params).get("token", ""))  # fmt: skip
    if short in ("basic", "authenticationbasic"):
        return AuthenticationBasic(auth_params_string=params)
    return None
