"""OAuth 2.0 access tokens (Pulsar's ``AuthenticationOauth2`` clients): a Bearer JWT issued
by the configured issuer, verified with the keys of the issuer's JWKS; its role is a claim
(``sub`` by default, as Pulsar's ``tokenAuthClaim``).

``OAuth2Tokens.owns(token)`` says whether a Bearer token is the issuer's (its unverified
``iss``): the token check sends those here and the rest to Pulsar's own tokens. ``role_of``
verifies: an asymmetric algorithm (RS/PS/ES) of a key of the JWKS with the token's ``kid``,
``iss`` equal to the issuer, ``exp`` required and not passed, ``aud`` holding ``audience``
when one is set, ``token_use`` ``access`` when present (Amazon Cognito's access tokens).

The JWKS comes from ``fetch`` (``ports``-free: a callable the composition root makes from
``OAUTH2_JWKS_URL`` or a file), read on first use and kept; a token whose ``kid`` is not in
it makes one new read (key rotation), at most every ``refetch_s`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import jwt

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security.model import Role
from magnetar_wire.token_keys import InvalidKey
from magnetar_wire.tokens import BadSignature, MalformedToken, TokenExpired

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
"""What an issuer signs with; HS* and ``none`` are refused (the JWKS is public)."""
_HINT = "get a new access token from the issuer (AuthenticationOauth2 does it by itself)"


def unverified_issuer(token: str) -> str | None:
    """The ``iss`` claim of a JWT, unverified; None for a token that is not a JWT or
    has no string ``iss``."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    issuer = claims.get("iss")
    return issuer if isinstance(issuer, str) else None


class OAuth2Tokens:
    """Access tokens of ``issuer`` (``OAUTH2_ISSUER``), verified with the JWKS ``fetch``
    returns (a JSON object). ``audience``: required in ``aud`` (None: not checked);
    ``role_claim``: the claim that names the role; ``leeway_s``: clock skew on
    ``exp``/``nbf``. Thread-safe."""

    def __init__(self, issuer: str, fetch: Callable[[], Mapping[str, Any]],
                 audience: str | None = None, role_claim: str = "sub", leeway_s: int = 0,
                 refetch_s: float = 60.0,
                 clock_s: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.issuer = issuer.rstrip("/")
        self._fetch, self._audience, self._claim = fetch, audience, role_claim
        self._leeway_s, self._refetch_s, self._clock_s = leeway_s, refetch_s, clock_s
        self._keys: dict[str, jwt.PyJWK] | None = None
        self._fetched_at = float("-inf")
        self._lock = threading.Lock()

    def owns(self, token: str) -> bool:
        """Whether ``token`` names this issuer (unverified: ``role_of`` verifies)."""
        issuer = unverified_issuer(token)
        return issuer is not None and issuer.rstrip("/") == self.issuer

    def role_of(self, token: str, now_s: int) -> Role:
        """The role of a valid access token at ``now_s``. Raises MalformedToken,
        BadSignature, TokenExpired (401); InvalidKey when the JWKS cannot be read."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise MalformedToken(f"the access token cannot be read ({exc}); {_HINT}") from None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise BadSignature(f"the access token's algorithm {algorithm!r} is not one an OAuth 2.0 issuer signs with ({', '.join(ALGORITHMS)})")  # fmt: skip
        key = self._key(str(header.get("kid") or ""))
        claims = self._claims(token, key, str(algorithm), now_s)
        if claims.get("token_use", "access") != "access":
            raise MalformedToken(f"the token is a {claims['token_use']!r} token, not an access token; {_HINT}")  # fmt: skip
        name = claims.get(self._claim)
        if not isinstance(name, str):
            raise MalformedToken(f"the access token has no string {self._claim!r} claim (the role)")  # fmt: skip
        try:
            return Role(name)
        except InvalidMessage as exc:
            raise MalformedToken(f"the access token's {self._claim!r} is not a valid role: {exc.message}") from None  # fmt: skip

    def _claims(self, token: str, key: jwt.PyJWK, algorithm: str, now_s: int) -> dict[str, Any]:
        try:
            return self._decode(token, key, algorithm, now_s)
        except jwt.ExpiredSignatureError:
            raise TokenExpired(f"the access token expired; {_HINT}") from None
        except jwt.ImmatureSignatureError:
            raise TokenExpired(f"the access token is not valid yet (nbf); {_HINT}") from None
        except jwt.InvalidSignatureError:
            raise BadSignature(f"the access token's signature does not verify with the issuer's keys; {_HINT}") from None  # fmt: skip
        except jwt.InvalidIssuerError:
            raise BadSignature(f"the access token is not from {self.issuer}") from None
        except jwt.InvalidAudienceError:
            raise BadSignature(f"the access token is not for the audience {self._audience!r}; ask the issuer for that audience") from None  # fmt: skip
        except jwt.PyJWTError as exc:
            raise MalformedToken(f"the access token is not valid ({exc}); {_HINT}") from None

    def _decode(self, token: str, key: jwt.PyJWK, algorithm: str, now_s: int) -> dict[str, Any]:
        """PyJWT's checks at ``now_s`` (its own clock is the wall clock: the times are
        checked here against ``now_s`` after the signature, issuer and audience)."""
        claims = jwt.decode(token, key.key, algorithms=[algorithm], issuer=self.issuer,
                            audience=self._audience,
                            options={"require": ["exp", "iss"],
                                     "verify_aud": self._audience is not None,
                                     "verify_exp": False, "verify_nbf": False,
                                     "verify_iat": False})  # fmt: skip
        expires = claims.get("exp")
        if not isinstance(expires, (int, float)):
            raise jwt.InvalidTokenError("exp is not a number")
        if now_s >= expires + self._leeway_s:
            raise jwt.ExpiredSignatureError("expired")
        not_before = claims.get("nbf")
        if isinstance(not_before, (int, float)) and now_s + self._leeway_s < not_before:
            raise jwt.ImmatureSignatureError("nbf")
        return claims

    def _key(self, kid: str) -> jwt.PyJWK:
        """The JWKS key ``kid`` (the only key when the token names none and there is one).
        Raises BadSignature for a key the issuer does not have, InvalidKey."""
        with self._lock:
            if self._keys is None:
                self._load()
            found = self._find(kid)
            if found is None and self._clock_s() - self._fetched_at >= self._refetch_s:
                self._load()  # rotated keys
                found = self._find(kid)
        if found is None:
            raise BadSignature(f"the issuer's keys have no key {kid!r}; {_HINT}")
        return found

    def _find(self, kid: str) -> jwt.PyJWK | None:
        keys = self._keys or {}
        if not kid and len(keys) == 1:
            return next(iter(keys.values()))
        return keys.get(kid)

    def _load(self) -> None:
        self._fetched_at = self._clock_s()
        try:
            document = self._fetch()
            key_set = jwt.PyJWKSet.from_dict(dict(document))
        except (OSError, ValueError, jwt.PyJWTError) as exc:
            raise InvalidKey(f"cannot read the OAuth 2.0 issuer's JWKS: {exc}") from exc
        self._keys = {str(k.key_id or ""): k for k in key_set.keys}
