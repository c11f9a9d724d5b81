"""The local stack under fault injection: every new Lambda container's engine gets boto3
clients with a ``FaultInjector`` installed, and the gateway's answers are watched.

``faulty(stack, injector)`` is a context manager: within it, containers loaded by the
stack's gateway run ``Engine.build`` on injected clients (the containers loaded before are
dropped first: cold starts), and ``GatewayObserver`` records what the service confirmed.
``restart(stack)`` is a restart of the service as Lambda has them: the gateway stops
listening for ``down_s`` (requests meanwhile fail to connect), every container is thrown
away, and the next requests cold-start new ones; the emulator (DynamoDB, S3, Step Functions)
keeps its state, as AWS does.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from magnetar_chaos.faults import FaultInjector
from magnetar_chaos.observer import GatewayObserver, observing
from magnetar_core.adapters.aws.clients import make_engine_clients
from magnetar_core.api.http import injected_engine
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_local.gateway import Gateway
from magnetar_local.stack import LocalStack
from magnetar_local.template import FunctionSpec


class FaultyEngines:
    """Makes each container's engine on clients with ``injector`` installed (clients made
    once and shared: boto3 clients are thread-safe; each engine keeps its own caches).
    Functions named in ``spared`` (template logical ids, e.g. ``NackFunction``) get clean
    clients: to tell which function's faults break an invariant."""

    def __init__(self, injector: FaultInjector, spared: frozenset[str] = frozenset()) -> None:
        settings = Settings.from_env(os.environ)
        self.settings = settings
        self.clean = make_engine_clients(settings)
        self.clients = tuple(injector.install(c) for c in make_engine_clients(settings))
        self.spared = spared

    @contextmanager
    def container(self, spec: FunctionSpec) -> Iterator[Engine]:
        """Loads within this block get a new engine on the faulty clients (clean ones for a
        spared function)."""
        clients = self.clean if spec.logical_id in self.spared else self.clients
        with injected_engine(Engine.build(self.settings, clients=clients)) as engine:
            yield engine


@contextmanager
def faulty(
    stack: LocalStack, injector: FaultInjector, spared: frozenset[str] = frozenset()
) -> Iterator[GatewayObserver]:
    """Within the block, the stack's handlers (but ``spared`` functions) run on faulty
    clients and the gateway is observed; afterwards the gateway is as before (its faulty
    containers dropped)."""
    gateway = _gateway(stack)
    engines = FaultyEngines(injector, spared)
    loader = gateway.loader
    loader.forget()
    before, loader.container_context = loader.container_context, engines.container
    try:
        with observing(gateway) as observer:
            yield observer
    finally:
        loader.container_context = before
        loader.forget()


def restart(stack: LocalStack, down_s: float = 1.0) -> float:
    """Stop the gateway, drop every container, serve again on the same port after
    ``down_s`` seconds; returns how long it was down (seconds). Raises OSError if the port
    cannot be bound again within 10 s."""
    gateway = _gateway(stack)
    started = time.monotonic()
    port = gateway.port
    gateway.stop()
    gateway.loader.forget()
    threading.Event().wait(down_s)
    gateway.requested_port = port
    deadline = time.monotonic() + 10
    while True:
        try:
            gateway.start()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            threading.Event().wait(0.1)
    return time.monotonic() - started


def _gateway(stack: LocalStack) -> Gateway:
    if stack.gateway is None:
        raise RuntimeError("the local stack is not running")
    return stack.gateway


def quiet_logs() -> None:
    """The gateway logs every abandoned or failed request: expected under injection."""
    import logging

    logging.getLogger("magnetar_local.gateway").setLevel(logging.CRITICAL)
    service = os.environ.get("POWERTOOLS_SERVICE_NAME", "magnetar")
    logging.getLogger(service).setLevel(logging.CRITICAL)
    logging.getLogger("magnetar").setLevel(logging.CRITICAL)
