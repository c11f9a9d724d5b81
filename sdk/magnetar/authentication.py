"""Authentication providers, named as in pulsar-client; they add an ``Authorization`` header."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlparse

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
            return _read_token_file(self._token)
        return self._token

    def _headers(self) -> dict[str, str]:
        token = self._current()
        if not isinstance(token, str) or not token.strip():
            raise ErrorGettingAuthenticationData("the token is empty")
        return {"Authorization": f"Bearer {token.strip()}"}


def _read_token_file(url: str) -> str:
    """The token in the file of a ``file:///absolute/path`` URL; raises
    ErrorGettingAuthenticationData saying which file and why."""
    parsed = urlparse(url)
    path = unquote(parsed.path)
    if parsed.netloc not in ("", "localhost") or not path.startswith("/"):
        raise ErrorGettingAuthenticationData(
            f"{url!r} is not a file URL of an absolute path: write file:///absolute/path"
        )
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise ErrorGettingAuthenticationData(f"cannot read the token file {path}: {e}") from e


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
            username, password, method = _basic_params(auth_params_string)
        check_type(str, username, "username")
        check_type(str, password, "password")
        check_type(str, method, "method")
        raw = f"{username}:{password}".encode()
        self._value = "Basic " + base64.b64encode(raw).decode("ascii")
        self.method = method
        self._unsupported = None

    def _headers(self) -> dict[str, str]:
        return {"Authorization": self._value}


def _basic_params(text: str) -> tuple[Any, Any, Any]:
    """``(username, password, method)`` of an ``auth_params_string``; raises ValueError."""
    try:
        params = json.loads(text)
    except ValueError as e:
        raise ValueError(f"auth_params_string is not JSON: {e}") from None
    if not isinstance(params, dict) or "username" not in params or "password" not in params:
        raise ValueError(
            'auth_params_string must be a JSON object like {"username": "my-user", '
            '"password": "my-pass"} (optional "method", default "basic")'
        )
    return params["username"], params["password"], params.get("method", "basic")


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
        try:
            params = json.loads(auth_params_string)
        except ValueError as e:
            raise ValueError(f"auth_params_string is not JSON: {e}") from None
        if not isinstance(params, dict) or not all(
            isinstance(params.get(k), str) and params[k] for k in ("issuer_url", "private_key")
        ):
            raise ValueError(
                'auth_params_string must be a JSON object like {"issuer_url": "https://...", '
                '"private_key": "file:///path/credentials.json", "audience": "..."}'
            )
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
        import requests

        client_id, client_secret = _oauth2_credentials(self.private_key)
        form = {"grant_type": "client_credentials", "client_id": client_id,
                "client_secret": client_secret}  # fmt: skip
        form.update({k: v for k, v in (("audience", self.audience), ("scope", self.scope)) if v})
        try:
            discovery = requests.get(
                f"{self.issuer_url}/.well-known/openid-configuration", timeout=10
            )
            discovery.raise_for_status()
            answer = requests.post(discovery.json()["token_endpoint"], data=form, timeout=10)
            answer.raise_for_status()
            body = answer.json()
            token, expires_in = body["access_token"], float(body.get("expires_in", 3600))
        except (requests.RequestException, ValueError, KeyError, TypeError) as e:
            raise ErrorGettingAuthenticationData(
                f"cannot get an access token from {self.issuer_url}: {e}"
            ) from e
        return str(token), time.monotonic() + 0.9 * expires_in


def _oauth2_credentials(location: str) -> tuple[str, str]:
    """``(client_id, client_secret)`` of the credentials JSON at ``location`` (see
    AuthenticationOauth2); raises ErrorGettingAuthenticationData saying why not."""
    try:
        if location.startswith("data:"):
            meta, _, data = location[len("data:") :].partition(",")
            text = base64.b64decode(data).decode() if meta.endswith(";base64") else unquote(data)
        else:
            path = unquote(urlparse(location).path) if location.startswith("file:") else location
            with open(path, encoding="utf-8") as f:
                text = f.read()
        credentials = json.loads(text)
        return str(credentials["client_id"]), str(credentials["client_secret"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ErrorGettingAuthenticationData(
            f"cannot read the OAuth 2.0 credentials (client_id, client_secret) at {location!r}: {e!r}"
        ) from e


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


def _plugin_params(text: str) -> dict[str, str]:
    """``k1:v1,k2:v2`` or a JSON object, as Pulsar's plugins take their parameters."""
    text = text.strip()
    if text.startswith("{"):
        try:
            params = json.loads(text)
        except ValueError as e:
            raise ValueError(f"authParamsString is not JSON: {e}") from None
        return {str(k): str(v) for k, v in params.items()} if isinstance(params, dict) else {}
    pairs = (item.split(":", 1) for item in text.split(",") if ":" in item)
    return {k.strip(): v.strip() for k, v in pairs}


def _builtin_plugin(name: str, params: str) -> Authentication | None:
    """The method a plugin name stands for (None: a plugin Magnetar does not have)."""
    short = name.removeprefix(_PLUGIN_PREFIX).lower()
    if short in ("tls", "authenticationtls"):
        p = _plugin_params(params)
        return AuthenticationTLS(p.get("tlsCertFile", ""), p.get("tlsKeyFile", ""))
    if short in ("token", "authenticationtoken"):
        if params.startswith("file://"):
            return AuthenticationToken(params)
        token = params.removeprefix("token:") if not params.startswith("{") else None
        return AuthenticationToken(token if token is not None else _plugin_params(params).get("token", ""))  # fmt: skip
    if short in ("basic", "authenticationbasic"):
        return AuthenticationBasic(auth_params_string=params)
    return None
