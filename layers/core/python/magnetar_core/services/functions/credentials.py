"""The short-lived credentials a function's batch runs with: a Pulsar token for the role that
registered the function, minted by the trusted side (``dispatch.FunctionDispatcher``) for
each batch and valid ``FUNCTION_TOKEN_TTL_S``; none when authentication is off.

The token is an ordinary Pulsar token (``{"sub": role, "exp": ...}``, HS256 with the
service's secret key), so the HTTP API's authorizer and guard check it as any other and the
function may do exactly what its role may: produce where the role may produce, read and
write its own counters and state (the namespace's ``functions`` permission). Revoking the
role's grants stops the function's next calls. See docs/security.md for the trust argument.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.triggers.records import TargetFailed
from magnetar_wire.tokens import SigningKey, VerificationKeys, create

FUNCTION_TOKEN_TTL_S = 120
"""How long a batch's token lives: longer than the runner Lambda's timeout (60 s), short
enough that a token leaked by user code is soon worthless."""


def signing_key_of(keys: VerificationKeys | None) -> SigningKey | None:
    """The key that signs tokens the service verifies: its secret key (None when it
    verifies with a public key only: it then cannot mint tokens)."""
    if keys is None or not keys.secret_key:
        return None
    return SigningKey.secret(keys.secret_key)


class FunctionCredentials:
    """Mints a batch's token (``enabled``: authentication is on) with the key
    ``signing_key()`` gives (read on first use: on AWS an SSM read), at ``now_s()``."""

    def __init__(
        self,
        enabled: bool,
        signing_key: Callable[[], SigningKey | None],
        now_s: Callable[[], int],
        ttl_s: int = FUNCTION_TOKEN_TTL_S,
    ) -> None:
        self._enabled = enabled
        self._signing_key = signing_key
        self._now_s = now_s
        self._ttl_s = ttl_s
        self._key: SigningKey | None = None

    def token_for(self, config: FunctionConfig) -> str | None:
        """A token for ``config``'s role expiring in ``ttl_s`` (None: authentication is
        off). Raises TargetFailed (the batch is retried; the message is logged) when the
        function has no role or no key can sign."""
        if not self._enabled:
            return None
        if config.role is None:
            raise TargetFailed(
                f"Function {config.fqfn} was registered while authentication was off, so it "
                "has no role to run as: replace it (magnetar functions update) with the role "
                "it should run as"
            )
        if self._key is None:
            self._key = self._signing_key()
        if self._key is None:
            raise TargetFailed(
                f"Cannot run function {config.fqfn}: minting its role's token needs the "
                "service's secret token key, and the service has a public key only (set "
                "tokenSecretKey in the token key parameter)"
            )
        return create(self._key, config.role, self._now_s() + self._ttl_s)
