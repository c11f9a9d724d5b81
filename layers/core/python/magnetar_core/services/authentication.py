"""Authentication: the role an ``Authorization: Bearer`` header proves, a Pulsar token's or an
IAM token's, with the token keys read once per container.

Used by the API Gateway Lambda authorizer (``api.authorizer``) and available to the handlers'
own check (defence in depth), so both accept exactly the same credentials:

* a JWT as ``pulsar tokens`` makes it (``domain.security.authentication``), checked with the
  keys of ``KeySource``: ``TOKEN_SECRET_KEY`` / ``TOKEN_PUBLIC_KEY`` key references, and/or
  the SSM SecureString ``TOKEN_KEY_PARAMETER`` (``ports.SecretParameters``), read on first
  use and kept;
* an IAM token (``domain.security.iam``): a presigned ``sts:GetCallerIdentity`` call that STS
  answers with the caller's ARN (``ports.CallerIdentity``); the role is that ARN;
* and Pulsar's other providers (``services.credentials.Providers``): Basic credentials of
  an htpasswd file, a client certificate's CN, the anonymous role.

The parameter's value is a key reference (``data:;base64,...`` or plain base64: a secret key,
what ``magnetar tokens create-secret-key --base64`` prints), a PEM public key, or a JSON
object with Pulsar's setting names ``{"tokenSecretKey": REF, "tokenPublicKey": REF}``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable

from magnetar_core.domain.security.authentication import authenticate
from magnetar_core.domain.security.iam import caller_identity_request, is_iam_token, role_of_arn
from magnetar_core.domain.security.model import Role
from magnetar_core.ports import CallerIdentity, SecretParameters
from magnetar_core.services.credentials import Providers
from magnetar_wire.token_keys import InvalidKey, read_file, resolve
from magnetar_wire.tokens import MalformedToken, VerificationKeys, bearer_token

_PEM_PUBLIC = b"-----BEGIN PUBLIC KEY-----"
_JSON_NAMES = {"tokenSecretKey", "tokenPublicKey"}


def keys_of_parameter(value: str, read: Callable[[str], bytes] = read_file) -> tuple[bytes | None, bytes | None]:  # fmt: skip
    """``(secret key, public key)`` bytes of a key parameter's value (see the module
    docstring). Raises InvalidKey naming what is wrong."""
    text = value.strip()
    if text.startswith("{"):
        try:
            named = json.loads(text)
        except ValueError as exc:
            raise InvalidKey("the token key parameter starts with '{' but is not JSON") from exc
        if not isinstance(named, dict) or not named or set(named) - _JSON_NAMES:
            raise InvalidKey(
                "the token key parameter's JSON must be an object with tokenSecretKey and/or "
                "tokenPublicKey (key references)"
            )
        secret, public = named.get("tokenSecretKey"), named.get("tokenPublicKey")
        if not all(isinstance(v, str) for v in (secret or "", public or "")):
            raise InvalidKey("tokenSecretKey and tokenPublicKey must be strings (key references)")
        return (
            resolve(secret, read) if secret else None,
            resolve(public, read) if public else None,
        )
    if text.encode().startswith(_PEM_PUBLIC):
        return None, text.encode()
    return resolve(text, read), None


class KeySource:
    """The service's token verification keys, loaded on first use and kept (per container:
    one SSM read, the public key parsed once). Thread-safe.

    ``secret_key`` / ``public_key``: key references (settings ``TOKEN_SECRET_KEY`` /
    ``TOKEN_PUBLIC_KEY``); ``parameter``: the SSM parameter name (``TOKEN_KEY_PARAMETER``),
    read through ``parameters``. A failed load is not kept: the next call tries again.
    """

    def __init__(
        self,
        secret_key: str | None = None,
        public_key: str | None = None,
        parameter: str | None = None,
        parameters: SecretParameters | None = None,
        read: Callable[[str], bytes] = read_file,
    ) -> None:
        self._secret_ref, self._public_ref, self._parameter = secret_key, public_key, parameter
        self._parameters, self._read = parameters, read
        self._keys: VerificationKeys | None = None
        self._lock = threading.Lock()

    def keys(self) -> VerificationKeys:
        """The keys. Raises InvalidKey when none is configured or one cannot be read."""
        with self._lock:
            if self._keys is None:
                self._keys = self._load()
            return self._keys

    def _load(self) -> VerificationKeys:
        secret = resolve(self._secret_ref, self._read) if self._secret_ref else None
        public = resolve(self._public_ref, self._read) if self._public_ref else None
        if self._parameter:
            if self._parameters is None:
                raise InvalidKey(f"no parameter store to read {self._parameter!r} from")
            stored_secret, stored_public = keys_of_parameter(
                self._parameters.read(self._parameter), self._read
            )
            secret, public = secret or stored_secret, public or stored_public
        if not secret and not public:
            raise InvalidKey(
                "authentication is enabled but no token key is configured: set "
                "TOKEN_KEY_PARAMETER (an SSM SecureString), TOKEN_SECRET_KEY or TOKEN_PUBLIC_KEY"
            )
        return VerificationKeys.of(secret, public)


class Authenticator:
    """The role of an ``Authorization`` header: a Pulsar token checked with ``keys``, or an
    IAM token for cluster ``cluster`` checked by STS through ``identity`` (None: IAM tokens
    refused). ``sts_endpoints``: origins accepted besides STS's HTTPS endpoints (the local
    emulator's). ``leeway_s``: clock skew allowed on ``exp``/``nbf``. ``providers``: Basic,
    client certificates and the anonymous role (``services.credentials``; default: none)."""

    def __init__(
        self,
        keys: KeySource,
        identity: CallerIdentity | None,
        cluster: str,
        sts_endpoints: Iterable[str] = (),
        leeway_s: int = 0,
        providers: Providers | None = None,
    ) -> None:
        self._keys = keys
        self._identity = identity
        self._cluster = cluster
        self._sts_endpoints = tuple(sts_endpoints)
        self._leeway_s = leeway_s
        self.providers = providers or Providers()

    def role_of(self, authorization: str | None, now_s: int, certificate: str | None = None) -> Role:  # fmt: skip
        """The role the header (or the verified client ``certificate``'s PEM, or none: the
        anonymous role) proves at ``now_s`` (epoch seconds). Raises the AuthenticationError
        subclasses (401): MissingToken, MalformedToken, BadSignature, TokenExpired,
        BadCredentials, BadCertificate; InvalidKey when the service's keys or htpasswd file
        are not configured or unreadable (a deployment fault: the caller is refused and the
        fault logged); StorageFault when STS cannot be reached."""
        return self.providers.role_of(
            authorization, certificate, lambda header: self._token_role(header, now_s), now_s
        )

    def _token_role(self, authorization: str | None, now_s: int) -> Role:
        token = bearer_token(authorization)
        if not is_iam_token(token):
            return authenticate(token, self._keys.keys(), now_s, self._leeway_s)
        if self._identity is None:
            raise MalformedToken(
                "this service does not accept IAM tokens: send a Pulsar token "
                "(`magnetar tokens create ... --subject ROLE`)"
            )
        url, headers = caller_identity_request(token, self._cluster, now_s, self._sts_endpoints)
        return role_of_arn(self._identity.caller_arn(url, headers))
