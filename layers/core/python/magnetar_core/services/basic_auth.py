"""Basic authentication, as Pulsar's ``AuthenticationProviderBasic``: an ``Authorization:
Basic base64(user:password)`` header proves the role ``user`` when the htpasswd file has an
entry for ``user`` whose hash the password matches.

Entries are ``user:hash``, one a line, with the hashes Pulsar reads: bcrypt (``$2y$``,
``$2a$``, ``$2b$``; ``htpasswd -B``), Apache's MD5 (``$apr1$``; ``htpasswd -m``) and
crypt (13 characters; ``htpasswd -d``). Blank lines and ``#`` comments are skipped.

``HtpasswdSource`` reads the file once (a key reference: ``file:///path``,
``data:;base64,...``, or a named secret through ``ports.SecretParameters``, e.g. SSM's
``/aws/reference/secretsmanager/<secret id>``) and keeps the users. A checked header is
remembered (by its SHA-256) for ``cache_s`` seconds: a bcrypt check at cost 10 took 323 ms
(measured) and the SDK sends the header on every request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
import time
from collections.abc import Callable, Mapping

import bcrypt
from passlib.hash import apr_md5_crypt, des_crypt  # type: ignore[import-untyped]

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security.model import Role
from magnetar_core.ports import SecretParameters
from magnetar_wire.token_keys import InvalidKey, read_file, resolve
from magnetar_wire.tokens import AuthenticationError

UNKNOWN = "Unknown user or invalid password"
"""Pulsar's AuthenticationProviderBasic message for both (it tells no one which)."""
MAX_CACHED = 1024
_BCRYPT = ("$2y$", "$2a$", "$2b$")


class BadCredentials(AuthenticationError):
    """The user is unknown, its password does not match, or the header is not Basic's."""


def parse_htpasswd(text: str) -> dict[str, str]:
    """``{user: hash}`` of an htpasswd file's text. Raises InvalidKey naming the first line
    that is not ``user:hash`` with a hash Pulsar reads."""
    users: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, colon, hashed = line.partition(":")
        if not colon or not user or not _known_hash(hashed):
            raise InvalidKey(
                f"htpasswd line {number} is not user:hash with a bcrypt ($2y$), apr1 ($apr1$) "
                "or crypt hash (make entries with `htpasswd -B`)"
            )
        users[user] = hashed
    return users


def _known_hash(hashed: str) -> bool:
    return hashed.startswith((*_BCRYPT, "$apr1$")) or len(hashed) == 13


def password_matches(password: str, hashed: str) -> bool:
    """Whether ``password`` matches the htpasswd hash ``hashed`` (False for a hash of no
    known kind or a password bcrypt cannot take: over 72 bytes)."""
    secret = password.encode()
    try:
        if hashed.startswith(_BCRYPT):
            return bcrypt.checkpw(secret, hashed.encode())
        if hashed.startswith("$apr1$"):
            return bool(apr_md5_crypt.verify(secret, hashed))
        return len(hashed) == 13 and bool(des_crypt.verify(secret, hashed))
    except ValueError:
        return False


def basic_credentials(authorization: str) -> tuple[str, str]:
    """``(user, password)`` of an ``Authorization: Basic ...`` header value. Raises
    BadCredentials for another scheme or a value that is not base64 of ``user:password``."""
    scheme, _, encoded = authorization.strip().partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        raise BadCredentials("the Authorization header must be `Basic base64(user:password)`")
    try:
        text = base64.b64decode(encoded.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise BadCredentials("the Basic credentials are not base64 of UTF-8 text") from None
    user, colon, password = text.partition(":")
    if not colon or not user:
        raise BadCredentials("Base64-decoded value needs to be in the format of userId:password")
    return user, password


class BasicUsers:
    """The users of one htpasswd file, checking headers (remembered ``cache_s`` seconds by
    the monotonic ``clock_s``). Thread-safe."""

    def __init__(self, users: Mapping[str, str], cache_s: float = 60.0,
                 clock_s: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._users = dict(users)
        self._cache_s, self._clock_s = cache_s, clock_s
        self._checked: dict[bytes, tuple[float, Role]] = {}
        self._lock = threading.Lock()

    def role_of(self, authorization: str) -> Role:
        """The role a Basic header proves. Raises BadCredentials (401)."""
        digest = hashlib.sha256(authorization.strip().encode()).digest()
        now = self._clock_s()
        with self._lock:
            hit = self._checked.get(digest)
        if hit is not None and now - hit[0] < self._cache_s:
            return hit[1]
        user, password = basic_credentials(authorization)
        hashed = self._users.get(user)
        if hashed is None or not password_matches(password, hashed):
            raise BadCredentials(UNKNOWN)
        try:
            role = Role(user)
        except InvalidMessage as exc:
            raise BadCredentials(f"the user name is not a valid role: {exc.message}") from None
        with self._lock:
            if len(self._checked) >= MAX_CACHED:
                self._checked.clear()
            self._checked[digest] = (now, role)
        return role


class HtpasswdSource:
    """The htpasswd users, loaded on first use and kept: from ``reference`` (a key
    reference to the file or its content, setting ``BASIC_AUTH_HTPASSWD``) or the secret
    ``secret`` read through ``secrets`` (``BASIC_AUTH_SECRET``). A failed load is not kept."""

    def __init__(self, reference: str | None = None, secret: str | None = None,
                 secrets: SecretParameters | None = None,
                 read: Callable[[str], bytes] = read_file) -> None:  # fmt: skip
        if not reference and not secret:
            raise ValueError("an htpasswd source needs a file reference or a secret name")
        self._reference, self._secret, self._secrets, self._read = reference, secret, secrets, read
        self._users: BasicUsers | None = None
        self._lock = threading.Lock()

    def users(self) -> BasicUsers:
        """The users. Raises InvalidKey when the file or secret cannot be read or parsed."""
        with self._lock:
            if self._users is None:
                self._users = BasicUsers(parse_htpasswd(self._text()))
            return self._users

    def _text(self) -> str:
        if self._reference:
            data = resolve(self._reference, self._read)
        elif self._secrets is None:
            raise InvalidKey(f"no secret store to read the htpasswd secret {self._secret!r} from")
        else:
            data = self._secrets.read(str(self._secret)).encode()
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise InvalidKey("the htpasswd file is not UTF-8 text") from None

    def role_of(self, authorization: str) -> Role:
        """``BasicUsers.role_of`` on the loaded users (InvalidKey when they cannot be)."""
        return self.users().role_of(authorization)
