"""The OAuth 2.0 issuer's JWKS (``services.oauth2``): fetched over HTTPS from its URL
(``OAUTH2_JWKS_URL``; Amazon Cognito's ``https://cognito-idp.<region>.amazonaws.com/<pool
id>/.well-known/jwks.json``), or read from a ``file://`` URL (``magnetar local --oauth2-jwks``
with a file)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlparse

from magnetar_wire.token_keys import InvalidKey

TIMEOUT_S = 5.0
MAX_BYTES = 1024 * 1024


def jwks_fetcher(location: str, timeout_s: float = TIMEOUT_S) -> Callable[[], dict[str, Any]]:
    """A callable returning the JWKS at ``location`` (``https://``/``http://`` URL or
    ``file:///path``), read anew on every call. Raises ValueError for another scheme; the
    callable raises InvalidKey / OSError."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        path = unquote(parsed.path)

        def read_file() -> dict[str, Any]:
            with open(path, encoding="utf-8") as f:
                return jwks_of_text(f.read(MAX_BYTES))

        return read_file
    if parsed.scheme not in ("https", "http"):
        raise ValueError(f"the JWKS location must be an https:// or file:// URL, not {location!r}")

    def fetch() -> dict[str, Any]:
        request = urllib.request.Request(location, headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:  # noqa: S310 - http(s) only
            body = answer.read(MAX_BYTES + 1)
        if len(body) > MAX_BYTES:
            raise InvalidKey(f"the JWKS at {location} is over {MAX_BYTES} bytes")
        return jwks_of_text(body.decode("utf-8", errors="replace"))

    return fetch


def jwks_of_text(text: str) -> dict[str, Any]:
    """A JWKS document from its JSON text. Raises InvalidKey."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise InvalidKey("the JWKS is not JSON") from exc
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise InvalidKey('a JWKS is a JSON object {"keys": [...]}')
    return document
