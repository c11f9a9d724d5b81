"""The OAuth 2.0 client-credentials grant of ``AuthenticationOauth2``: the credentials JSON
read from where ``private_key`` says, the issuer's token endpoint discovered from its
``/.well-known/openid-configuration``, and an access token asked of it. Whatever fails
raises ErrorGettingAuthenticationData saying what."""

from __future__ import annotations

import base64
import json
import time
from urllib.parse import unquote, urlparse

from magnetar.exceptions import ErrorGettingAuthenticationData

__all__ = ["REFRESH_SHARE", "credentials", "fetch_token"]

REFRESH_SHARE = 0.9  # a token is fetched again when this share of its expires_in has passed


def credentials(location: str) -> tuple[str, str]:
    """``(client_id, client_secret)`` of the credentials JSON at ``location``: ``/path``,
    ``file:///path``, ``file:/path`` or ``data:application/json;base64,...``; raises
    ErrorGettingAuthenticationData saying why not."""
    try:
        if location.startswith("data:"):
            meta, _, data = location[len("data:") :].partition(",")
            text = base64.b64decode(data).decode() if meta.endswith(";base64") else unquote(data)
        else:
            path = unquote(urlparse(location).path) if location.startswith("file:") else location
            with open(path, encoding="utf-8") as f:
                text = f.read()
        found = json.loads(text)
        return str(found["client_id"]), str(found["client_secret"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ErrorGettingAuthenticationData(
            f"cannot read the OAuth 2.0 credentials (client_id, client_secret) at {location!r}: {e!r}"
        ) from e


def fetch_token(issuer_url: str, private_key: str, audience: str | None,
                scope: str | None) -> tuple[str, float]:  # fmt: skip
    """``(access token, when to fetch again: monotonic seconds)`` from the token endpoint of
    ``issuer_url`` (``grant_type=client_credentials`` with the credentials at
    ``private_key``, and ``audience`` / ``scope`` when set)."""
    import requests

    client_id, client_secret = credentials(private_key)
    form = {"grant_type": "client_credentials", "client_id": client_id,
            "client_secret": client_secret}  # fmt: skip
    form.update({k: v for k, v in (("audience", audience), ("scope", scope)) if v})
    try:
        discovery = requests.get(f"{issuer_url}/.well-known/openid-configuration", timeout=10)
        discovery.raise_for_status()
        answer = requests.post(discovery.json()["token_endpoint"], data=form, timeout=10)
        answer.raise_for_status()
        body = answer.json()
        token, expires_in = body["access_token"], float(body.get("expires_in", 3600))
    except (requests.RequestException, ValueError, KeyError, TypeError) as e:
        raise ErrorGettingAuthenticationData(
            f"cannot get an access token from {issuer_url}: {e}"
        ) from e
    return str(token), time.monotonic() + REFRESH_SHARE * expires_in
