"""Authentication: the role a request proves, from a Pulsar token (``magnetar_wire.tokens``).

Pure: the keys are built once by the caller (``VerificationKeys.of``) and the time is passed
in. Raises the ``AuthenticationError`` subclasses (HTTP 401) of ``magnetar_wire.tokens``:
MissingToken, MalformedToken, BadSignature, TokenExpired — each message says what to do.
"""

from __future__ import annotations

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security.model import Role
from magnetar_wire.tokens import MalformedToken, VerificationKeys, bearer_token, validate


def authenticate(token: str | None, keys: VerificationKeys, now_s: int, leeway_s: int = 0) -> Role:
    """The role (``sub``) of a token valid at ``now_s`` (epoch seconds) under ``keys``.
    Raises MissingToken, MalformedToken (also for a ``sub`` that is no valid role),
    BadSignature, TokenExpired."""
    subject = validate(token, keys, now_s, leeway_s).subject
    try:
        return Role(subject)
    except InvalidMessage as exc:
        raise MalformedToken(f"the token's subject is not a valid role: {exc.message}") from exc


def authenticate_header(authorization: str | None, keys: VerificationKeys, now_s: int,
                        leeway_s: int = 0) -> Role:  # fmt: skip
    """``authenticate`` on an ``Authorization: Bearer <token>`` header value."""
    return authenticate(bearer_token(authorization), keys, now_s, leeway_s)
