"""A small OAuth 2.0 issuer for the tests, on a free local port: OpenID discovery
(``/.well-known/openid-configuration``), the client-credentials token endpoint
(``/oauth2/token``: RS256 access tokens whose ``sub`` is the client id, ``iss`` the issuer,
``aud`` the requested audience) and the JWKS (``/.well-known/jwks.json``), as Amazon
Cognito's user pools serve them. ``token_requests`` counts the tokens issued."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

KID = "test-key-1"


class Issuer:
    """Start with ``start()``; ``clients``: client id -> secret; ``expires_in_s`` of the
    tokens issued; ``url`` is the issuer (``iss``)."""

    def __init__(self, clients: dict[str, str], expires_in_s: int = 3600) -> None:
        self.clients, self.expires_in_s = dict(clients), expires_in_s
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.token_requests = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]}

    def token(self, subject: str, audience: str | None = None, expires_in_s: int | None = None,
              issuer: str | None = None, key: Any = None, **claims: Any) -> str:  # fmt: skip
        """An access token signed with the issuer's key (or ``key``)."""
        now = int(time.time())
        body = {"iss": issuer or self.url, "sub": subject, "iat": now,
                "exp": now + (self.expires_in_s if expires_in_s is None else expires_in_s),
                "token_use": "access", **claims}  # fmt: skip
        if audience:
            body["aud"] = audience
        return jwt.encode(body, key or self.key, algorithm="RS256", headers={"kid": KID})

    def write_credentials(self, path: Path, client_id: str) -> Path:
        """The credentials file AuthenticationOauth2's ``private_key`` names."""
        path.write_text(json.dumps({"type": "client_credentials", "client_id": client_id,
                                    "client_secret": self.clients[client_id]}))  # fmt: skip
        return path

    def start(self) -> Issuer:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, document: dict[str, Any]) -> None:
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - stdlib's name
                if self.path == "/.well-known/openid-configuration":
                    self._json(200, {"issuer": issuer.url,
                                     "token_endpoint": issuer.url + "/oauth2/token",
                                     "jwks_uri": issuer.url + "/.well-known/jwks.json"})  # fmt: skip
                elif self.path == "/.well-known/jwks.json":
                    self._json(200, issuer.jwks())
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self) -> None:  # noqa: N802 - stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                basic = self.headers.get("Authorization", "")
                if basic.startswith("Basic "):  # client_secret_basic
                    cid, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
                    form.setdefault("client_id", cid)
                    form.setdefault("client_secret", secret)
                client = form.get("client_id", "")
                if self.path != "/oauth2/token" or form.get("grant_type") != "client_credentials":
                    self._json(400, {"error": "unsupported_grant_type"})
                elif issuer.clients.get(client) != form.get("client_secret") or not client:
                    self._json(401, {"error": "invalid_client"})
                else:
                    issuer.token_requests += 1
                    token = issuer.token(client, form.get("audience"))
                    self._json(200, {"access_token": token, "token_type": "Bearer",
                                     "expires_in": issuer.expires_in_s})  # fmt: skip

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
