"""The parameter strings of the authentication providers, parsed as pulsar-client reads them:
basic auth's JSON ``auth_params_string``, OAuth 2.0's, a plugin's ``k1:v1,k2:v2`` (or JSON),
and the token file a ``file:///path`` token names. Each raises the error the provider
documents, saying what was wrong."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlparse

from magnetar.exceptions import ErrorGettingAuthenticationData

__all__ = ["basic_params", "oauth2_params", "plugin_params", "read_token_file"]


def read_token_file(url: str) -> str:
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


def basic_params(text: str) -> tuple[Any, Any, Any]:
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


def oauth2_params(text: str) -> dict[str, Any]:
    """The JSON object of an OAuth 2.0 ``auth_params_string``, with non-empty string
    ``issuer_url`` and ``private_key``; raises ValueError."""
    try:
        params = json.loads(text)
    except ValueError as e:
        raise ValueError(f"auth_params_string is not JSON: {e}") from None
    if not isinstance(params, dict) or not all(
        isinstance(params.get(k), str) and params[k] for k in ("issuer_url", "private_key")
    ):
        raise ValueError(
            'auth_params_string must be a JSON object like {"issuer_url": "https://...", '
            '"private_key": "file:///path/credentials.json", "audience": "..."}'
        )
    return params


def plugin_params(text: str) -> dict[str, str]:
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
