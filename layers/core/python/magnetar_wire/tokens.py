"""JSON Web Tokens exactly as Apache Pulsar's ``pulsar tokens create`` makes them.

A token is ``base64url(header).base64url(claims).base64url(signature)`` with header
``{"alg":"HS256"}`` (no ``typ``, as Pulsar's jjwt writes it; RS256/ES256 ... for key
pairs) and claims ``{"sub": ROLE}`` plus ``"exp"`` (epoch seconds) when the token expires.
``sub`` is the role the service authorizes. Tokens Pulsar made validate here and the other
way round. Times are passed in (``now_s``, epoch seconds): validation is a pure function.

Needs PyJWT and cryptography: the client's ``tokens`` extra
(``pip install 'magnetar-client[tokens]'``); the service always has them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import jwt

from .errors import MagnetarError
from .token_keys import (
    InvalidKey,
    PrivateKey,
    PublicKey,
    algorithms_of,
    load_private_key,
    load_public_key,
)

SECRET_ALGORITHMS = ("HS256", "HS384", "HS512")
CREATE_HINT = "create a new one with `magnetar tokens create ... --subject ROLE`"
_RELATIVE = re.compile(r"^\s*(-?[0-9]+)\s*([smhdwySMHDWY]?)\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400, "y": 365 * 86_400}


class AuthenticationError(MagnetarError):
    """Pulsar's AuthenticationError (HTTP 401): the caller's credentials prove no role."""

    code = "AuthenticationError"
    status = 401


class MissingToken(AuthenticationError):
    """No token was sent."""


class MalformedToken(AuthenticationError):
    """The text is not a JWT, or its header or claims break the rules (no ``sub``, ...)."""


class BadSignature(AuthenticationError):
    """The signature does not verify with the service's keys (tampered, or another key),
    or the token's algorithm is not one those keys verify."""


class TokenExpired(AuthenticationError):
    """The token's ``exp`` has passed (or its ``nbf`` has not come yet)."""


def utc_text(epoch_s: int) -> str:
    """``epoch_s`` as ``2026-11-24 07:30:00 UTC``."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse_relative_time_s(text: str) -> int:
    """A duration as Pulsar's ``--expiry-time`` takes it, in seconds: a number with an
    optional unit ``s`` (the default), ``m`` (minutes), ``h``, ``d``, ``w`` or ``y`` (365 days):
    ``30m`` is 1800. Raises ValueError saying the format when it is not one, or negative."""
    match = _RELATIVE.match(text)
    if not match:
        raise ValueError(
            f"invalid expiry time {text!r}: write a number with a unit s, m, h, d, w or y "
            "(for example 30m, 1h, 7d, 1y)"
        )
    amount, unit = int(match.group(1)), (match.group(2) or "s").lower()
    if amount < 0:
        raise ValueError(f"invalid expiry time {text!r}: it may not be negative")
    return amount * _UNIT_S[unit]


@dataclass(frozen=True)
class SigningKey:
    """What ``create`` signs with: a secret key (HS256) or a key pair's private key."""

    key: bytes | PrivateKey
    algorithms: tuple[str, ...]

    @classmethod
    def secret(cls, data: bytes) -> SigningKey:
        """A secret key's raw bytes (not base64); raises InvalidKey when empty."""
        if not data:
            raise InvalidKey("the secret key is empty")
        return cls(data, SECRET_ALGORITHMS)

    @classmethod
    def private(cls, data: bytes) -> SigningKey:
        """A private key, PKCS#8 DER or PEM; raises InvalidKey."""
        key = load_private_key(data)
        return cls(key, algorithms_of(key))


@dataclass(frozen=True)
class VerificationKeys:
    """What the service checks tokens with: a secret key, a public key, or both. Build it
    once (parsing a public key is not free) with ``of``."""

    secret_key: bytes | None = None
    public_key: PublicKey | None = None
    _by_algorithm: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(
        cls, secret_key: bytes | None = None, public_key: bytes | None = None
    ) -> VerificationKeys:
        """Keys from a secret key's raw bytes and/or a public key (DER or PEM); raises
        InvalidKey when neither is given or the public key cannot be read."""
        if not secret_key and not public_key:
            raise InvalidKey("token authentication needs a secret key or a public key")
        public = load_public_key(public_key) if public_key else None
        by_algorithm: dict[str, Any] = {}
        if secret_key:
            by_algorithm.update(dict.fromkeys(SECRET_ALGORITHMS, secret_key))
        if public is not None:
            by_algorithm.update(dict.fromkeys(algorithms_of(public), public))
        return cls(secret_key or None, public, by_algorithm)

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The JWT algorithms these keys verify."""
        return tuple(self._by_algorithm)

    def key_for(self, algorithm: str) -> Any:
        """The key that verifies ``algorithm``; raises BadSignature when none does."""
        try:
            return self._by_algorithm[algorithm]
        except KeyError:
            raise BadSignature(
                f"the token is signed with {algorithm}, but this service verifies only "
                f"{', '.join(self.algorithms)} tokens: {CREATE_HINT} signed with the "
                "service's key"
            ) from None


@dataclass(frozen=True)
class Claims:
    """A token's claims: ``subject`` (the role), ``expires_at_s`` (None: never), all of them
    in ``raw``."""

    subject: str
    expires_at_s: int | None
    raw: dict[str, Any]


def create(signing_key: SigningKey, subject: str, expires_at_s: int | None = None,
           algorithm: str | None = None) -> str:  # fmt: skip
    """A token for role ``subject``, expiring at ``expires_at_s`` (epoch seconds; None:
    never), signed with ``algorithm`` (default: HS256 for a secret key, RS256 for RSA, the
    curve's ES algorithm for EC). Raises ValueError for an empty subject, InvalidKey when
    the key cannot sign with ``algorithm``."""
    if not subject or not subject.strip():
        raise ValueError("the subject (the role) may not be empty")
    chosen = algorithm or signing_key.algorithms[0]
    if chosen not in signing_key.algorithms:
        raise InvalidKey(
            f"this key cannot sign {chosen}: it signs {', '.join(signing_key.algorithms)}"
        )
    claims: dict[str, Any] = {"sub": subject}
    if expires_at_s is not None:
        claims["exp"] = int(expires_at_s)
    return jwt.encode(claims, signing_key.key, algorithm=chosen, headers={"typ": None})


def show(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(header, claims)`` of a token, its signature not checked (``pulsar tokens show``).
    Raises MalformedToken."""
    text = token.strip()
    try:
        header = jwt.get_unverified_header(text)
        claims = jwt.decode(text, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise MalformedToken(f"this is not a JSON Web Token ({exc}); {CREATE_HINT}") from exc
    return header, claims


def validate(token: str | None, keys: VerificationKeys, now_s: int, leeway_s: int = 0) -> Claims:
    """The claims of a token whose signature verifies with ``keys`` and which is valid at
    ``now_s`` (epoch seconds; ``leeway_s`` of clock skew allowed, Pulsar's default 0).

    Raises MissingToken (None or blank), MalformedToken (not a JWT; no string ``sub``;
    ``exp``/``nbf`` not numbers), BadSignature (tampered, signed with another key, or an
    algorithm the keys do not verify — ``none`` included) and TokenExpired (``exp`` passed,
    or ``nbf`` not reached); every message says what to do.
    """
    if token is None or not token.strip():
        raise _missing()
    text = token.strip()
    try:
        header = jwt.get_unverified_header(text)
    except jwt.PyJWTError as exc:
        raise MalformedToken(f"the token is not a JSON Web Token ({exc}); {CREATE_HINT}") from exc
    algorithm = header.get("alg")
    if not isinstance(algorithm, str):
        raise MalformedToken(f"the token's header names no algorithm; {CREATE_HINT}")
    key = keys.key_for(algorithm)
    try:
        signed = jwt.PyJWS().decode_complete(text, key, algorithms=[algorithm])
    except jwt.InvalidSignatureError as exc:
        raise BadSignature(
            f"the token's signature does not verify with this service's key (tampered, or "
            f"made with another key); {CREATE_HINT} with the service's key"
        ) from exc
    except jwt.PyJWTError as exc:
        raise MalformedToken(f"the token cannot be read ({exc}); {CREATE_HINT}") from exc
    return _check_claims(_claims_json(signed["payload"]), now_s, leeway_s)


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header value (scheme case-blind).
    Raises MissingToken when there is no header, MalformedToken for another scheme."""
    if authorization is None or not authorization.strip():
        raise _missing()
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise MalformedToken(
            f"the Authorization header must be `Bearer <token>` (it starts with {scheme!r})"
        )
    return token.strip()


def _missing() -> MissingToken:
    return MissingToken(
        "no token: send `Authorization: Bearer <token>` (a superuser makes one with "
        "`magnetar tokens create --secret-key file:///path --subject ROLE`)"
    )


def _claims_json(payload: bytes) -> dict[str, Any]:
    try:
        claims = json.loads(payload)
    except ValueError as exc:
        raise MalformedToken(f"the token's claims are not JSON; {CREATE_HINT}") from exc
    if not isinstance(claims, dict):
        raise MalformedToken(f"the token's claims are not a JSON object; {CREATE_HINT}")
    return claims


def _time_claim(claims: dict[str, Any], name: str) -> int | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedToken(f"the token's '{name}' claim is not a number; {CREATE_HINT}")
    return int(value)


def _check_claims(claims: dict[str, Any], now_s: int, leeway_s: int) -> Claims:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject.strip():
        raise MalformedToken(f"the token has no 'sub' claim naming its role; {CREATE_HINT}")
    expires = _time_claim(claims, "exp")
    if expires is not None and now_s >= expires + leeway_s:
        raise TokenExpired(
            f"the token of role '{subject}' expired at {utc_text(expires)}; "
            f"create a new one with `magnetar tokens create ... --subject {subject}`"
        )
    not_before = _time_claim(claims, "nbf")
    if not_before is not None and now_s + leeway_s < not_before:
        raise TokenExpired(
            f"the token of role '{subject}' is not valid before {utc_text(not_before)}; "
            "wait, or check this machine's clock"
        )
    return Claims(subject, expires, claims)
