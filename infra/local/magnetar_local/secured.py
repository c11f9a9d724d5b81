"""``SecuredGateway``: the real handlers with authentication on, over a running LocalStack's
emulator, for tests (the role x route matrix, the SDK with tokens, the fuzz lane with auth).

A second local gateway whose handler containers are loaded with an engine built from the
stack's settings plus authentication (a fresh HS256 secret key, superuser ``admin``, grants
read on every request) and injected (``api.http.injected_engine``), so it shares the
stack's tables and bucket but not its ``os.environ``: starting one costs a gateway, not a
second emulator. Maintenance jobs it would launch are recorded, not run (``launched``).
With ``front_door="function-url"`` it serves the API as the function URL does
(``Gateway.function_url``): ``DataPlaneFunction`` gets function-URL events and checks tokens
itself with the authorizer of the same settings (``api.authorizer.injected_authorizer``).
With ``triggers=True`` its answers also wake the stack's trigger driver, as the stack's own
gateway's do (so webhook triggers created through it run, as under ``magnetar local --auth``);
off by default, so the route matrix's triggers never call out.

``SecuredMemoryService``: the same settings (a fresh key, superuser ``admin``, grants read on
every request, jobs recorded) on a ``MemoryService``: the same handlers and authorization on
in-memory stores, for tests where the emulator's stores add nothing they assert.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from magnetar_core.api.authorizer import RequestAuthorizer, injected_authorizer
from magnetar_core.api.metrics import SERVICE
from magnetar_core.engine import Engine, authenticator_from_settings, aws_stores, metrics_history
from magnetar_core.ports import MetricsHistory, Stores
from magnetar_core.settings import Settings
from magnetar_local.function_url import front_door_function
from magnetar_local.gateway import Gateway
from magnetar_local.memory_gateway import EngineLoader
from magnetar_local.memory_service import MemoryService, memory_settings
from magnetar_local.stack import LocalStack
from magnetar_local.template import FunctionSpec
from magnetar_wire import token_keys, tokens

SUPERUSER = "admin"


def secured(settings: Settings, secret_key: bytes, superuser: str) -> Settings:
    """``settings`` with authentication on: tokens signed with ``secret_key`` (HS256),
    ``superuser`` the superuser role, grants read on every request."""
    return replace(
        settings,
        authentication_enabled=True,
        superuser_roles=(superuser,),
        token_secret_key="data:;base64," + base64.b64encode(secret_key).decode(),
        token_public_key=None,
        token_key_parameter=None,
        authorization_cache_ms=0,
    )


class RecordingLauncher:
    """A JobLauncher that records the runs it was asked to start and starts none."""

    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, str]]] = []

    def start(self, job: str, args: Mapping[str, str]) -> str:
        self.started.append((job, dict(args)))
        return f"{job}-recorded-{len(self.started)}"


class _Tokens:
    """Tokens of the gateway's key (``secret_key``) for tests."""

    secret_key: bytes

    def token(self, role: str, expires_at_s: int | None = None) -> str:
        """A token of ``role`` signed with the gateway's key (expiring at epoch seconds
        ``expires_at_s``; None: never)."""
        return tokens.create(tokens.SigningKey.secret(self.secret_key), role, expires_at_s)

    def headers(self, role: str) -> dict[str, str]:
        """The ``Authorization`` header of ``role``'s token."""
        return {"Authorization": f"Bearer {self.token(role)}"}


class SecuredGateway(_Tokens):
    """Handlers with authentication on over ``stack``'s emulator (see the module's
    docstring); ``clients`` are ``(dynamodb, s3, stepfunctions)`` on it. ``url`` after
    ``start``; ``token(role)`` makes a token the handlers accept; ``engine`` and ``stores``
    arrange and read state directly."""

    def __init__(
        self,
        stack: LocalStack,
        clients: tuple[Any, Any, Any],
        superuser: str = SUPERUSER,
        front_door: str = "http-api",
        triggers: bool = False,
    ) -> None:
        self.secret_key = token_keys.new_secret_key()
        self.superuser = superuser
        self.settings: Settings = secured(
            Settings.from_env(stack.environment), self.secret_key, superuser
        )
        self.launched = RecordingLauncher()
        self._clients = clients
        self.gateway = Gateway(
            stack.template.routes,
            stack.template.functions,
            region=stack.region,
            account_id=stack.template.account_id,
        )
        self.authorizer = RequestAuthorizer(authenticator_from_settings(self.settings), True)
        self.gateway.loader = _AuthorizerLoader(
            stack.template.functions, self.new_engine, self.metrics_history, self.authorizer
        )
        self.gateway.function_url = front_door_function(front_door)
        if triggers and stack.triggers is not None:  # its produces wake the stack's triggers
            self.gateway.observers.append(stack.triggers.observe)
        self.engine = self.new_engine()
        self.stores: Stores = aws_stores(self.settings, clients[0], clients[1])

    def new_engine(self) -> Engine:
        """An engine with authentication on (one per handler container)."""
        return Engine.build(self.settings, clients=self._clients, launcher=self.launched)

    def metrics_history(self) -> MetricsHistory:
        """The console's history its settings name (the stack's: ``local``)."""
        return metrics_history(self.settings, SERVICE)

    def start(self) -> SecuredGateway:
        self.gateway.start()
        return self

    def stop(self) -> None:
        self.gateway.stop()

    @property
    def url(self) -> str:
        return self.gateway.url


class SecuredMemoryService(_Tokens, MemoryService):
    """A ``MemoryService`` with ``SecuredGateway``'s settings (module docstring): ``token``,
    ``headers``, ``superuser`` and ``secret_key`` as a ``SecuredGateway``'s; ``engine`` and
    ``stores`` arrange and read state directly; jobs are recorded (``launched``)."""

    def __init__(self, superuser: str = SUPERUSER) -> None:
        self.secret_key = token_keys.new_secret_key()
        self.superuser = superuser
        self.launched = RecordingLauncher()
        super().__init__(secured(memory_settings(), self.secret_key, superuser))

    def new_engine(self) -> Engine:
        """An engine on the service's stores whose jobs are recorded, not started."""
        return Engine.assemble(
            self.settings, self.stores, self.runtime, self.timers, self.launched,
            signal=self.signal,
        )  # fmt: skip


class _AuthorizerLoader(EngineLoader):
    """An ``EngineLoader`` whose containers also get ``authorizer`` (the data plane's)."""

    def __init__(self, functions: dict[str, FunctionSpec], new_engine: Any, history: Any, authorizer: RequestAuthorizer) -> None:  # fmt: skip
        super().__init__(functions, new_engine, history)
        self._authorizer = authorizer

    def _load(self, spec: FunctionSpec, serial: int = 0) -> Any:  # type: ignore[override]
        with injected_authorizer(self._authorizer):
            return super()._load(spec, serial)
