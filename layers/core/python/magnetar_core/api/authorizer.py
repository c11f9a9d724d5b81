"""The API Gateway HTTP API Lambda REQUEST authorizer: payload format 2.0, simple responses.

API Gateway calls it with the request's ``Authorization`` header (the identity source) and
caches its answer per header value for the authorizer's TTL (``AuthorizerCacheSeconds`` in
template.yaml). It answers ``{"isAuthorized": true, "context": {"role": ROLE}}`` for a valid
Pulsar token or IAM token (``services.authentication``), which handlers read as
``requestContext.authorizer.lambda.role``, and ``{"isAuthorized": false}`` otherwise: API
Gateway then answers 403 itself, and a request without the header never reaches the
authorizer (401). The reason of every denial is logged (the caller only sees API Gateway's
body).

It authenticates, it does not authorize: the cache is keyed by the header alone, so an
answer reused for another route must not depend on the route. Which role may call which
route (``domain.security.policy``) is the handlers' check, against grants they read.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from magnetar_core.domain.errors import StorageFault
from magnetar_core.engine import authenticator_from_settings
from magnetar_core.services.authentication import Authenticator
from magnetar_core.services.credentials import client_certificate
from magnetar_core.settings import Settings
from magnetar_wire.token_keys import InvalidKey
from magnetar_wire.tokens import AuthenticationError

log = logging.getLogger("magnetar.authorizer")

ROLE_CONTEXT_KEY = "role"
"""The context key of the role (``requestContext.authorizer.lambda.role`` in handlers)."""


def allowed(role: str | None) -> dict[str, Any]:
    """A simple response admitting the request, with the role when there is one."""
    return {"isAuthorized": True, "context": {ROLE_CONTEXT_KEY: role} if role else {}}


def denied() -> dict[str, Any]:
    """A simple response refusing the request (API Gateway answers 403)."""
    return {"isAuthorized": False}


def authorization_header(event: Mapping[str, Any]) -> str | None:
    """The ``Authorization`` header of a payload 2.0 authorizer event (any case), else the
    first identity source value; None when there is neither."""
    headers = event.get("headers") or {}
    for name, value in headers.items():
        if isinstance(name, str) and name.lower() == "authorization" and isinstance(value, str):
            return value
    sources = event.get("identitySource") or []
    first = sources[0] if isinstance(sources, list) and sources else None
    return first if isinstance(first, str) else None


class RequestAuthorizer:
    """Answers authorizer events. ``enabled`` False (``AUTHENTICATION_ENABLED=false``)
    admits every request without a role, as the handlers then do; ``clock_s`` gives epoch
    seconds."""

    def __init__(
        self,
        authenticator: Authenticator,
        enabled: bool,
        clock_s: Callable[[], float] = time.time,
    ) -> None:
        self._authenticator = authenticator
        self._enabled = enabled
        self._clock_s = clock_s

    @property
    def enabled(self) -> bool:
        """False: every request is admitted without a role (authentication off)."""
        return self._enabled

    def __call__(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """The simple response to one authorizer event: denied for any token that proves no
        role (the reason logged). Raises InvalidKey (the key cannot be read) or StorageFault
        (STS cannot be asked), logged: API Gateway answers 500 and caches nothing, where a
        denial would lock the token out for the whole cache TTL after a passing fault."""
        if not self._enabled:
            return allowed(None)
        route = event.get("routeKey", "?")
        try:
            role = self._authenticator.role_of(
                authorization_header(event), int(self._clock_s()), client_certificate(event)
            )
        except AuthenticationError as exc:
            log.info("denied %s: %s: %s", route, type(exc).__name__, exc.message)
            return denied()
        except (InvalidKey, StorageFault) as exc:
            log.error("cannot check the token of %s: %s", route, exc)
            raise
        return allowed(role.name)


_injected: ContextVar[RequestAuthorizer | None] = ContextVar("magnetar_injected_authorizer", default=None)  # fmt: skip


def authorizer_from_env(env: Mapping[str, str], ssm: Any = None) -> RequestAuthorizer:
    """An authorizer from environment variables (template.yaml's names), reading the key
    parameter through ``ssm`` (an SSM client; None: one made here): no AWS request until the
    first token needs the key (one SSM read, then kept). Raises KeyError naming a missing
    setting."""
    settings = Settings.from_env(env)
    return RequestAuthorizer(
        authenticator_from_settings(settings, ssm=ssm), settings.authentication_enabled
    )


class ContainerAuthorizer:
    """A Lambda container's authorizer, built from ``os.environ`` on its first event (never
    at import, as the handlers' engines) and kept for the container's later events."""

    def __init__(self, env: Mapping[str, str] = os.environ) -> None:
        self._env = env
        self._built: RequestAuthorizer | None = _injected.get()
        self._lock = threading.Lock()

    def _authorizer(self) -> RequestAuthorizer:
        with self._lock:
            if self._built is None:
                self._built = authorizer_from_env(self._env)
            return self._built

    @property
    def enabled(self) -> bool:
        """Whether tokens are checked (``AUTHENTICATION_ENABLED``); builds the authorizer."""
        return self._authorizer().enabled

    def __call__(self, event: Mapping[str, Any]) -> dict[str, Any]:
        return self._authorizer()(event)


def container_authorizer() -> ContainerAuthorizer:
    """The authorizer of a handler module: ``authorize = container_authorizer()`` at module
    level, ``authorize(event)`` per invocation. A module loaded inside
    ``injected_authorizer`` gets that authorizer instead (captured at load)."""
    return ContainerAuthorizer()


@contextmanager
def injected_authorizer(authorizer: RequestAuthorizer) -> Iterator[RequestAuthorizer]:
    """Within the block (this thread / context only), ``container_authorizer`` answers with
    ``authorizer`` instead of one built from the environment (as ``http.injected_engine``)."""
    token = _injected.set(authorizer)
    try:
        yield authorizer
    finally:
        _injected.reset(token)
