"""Lambda as the model runs it: one request per container at a time, containers made on
demand up to the account's concurrency, a cold start for each new one (optional), and the
edge around each request (client -> API Gateway -> Lambda and back).

Each container is an ``Engine`` of its own (its caches: the head of the log, topics,
policies, dedup state) on the model's stores with a retry state of its own (its boto3
clients), as a Lambda container is one process. Functions are the template's: ``produce``,
``receive``, ``ack``, ``consumers``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from magnetar_bench.scale.profile import Profile
from magnetar_bench.scale.sim import Simulation
from magnetar_core.engine import Engine

T = TypeVar("T")

GATEWAY_TIMEOUT_MS = 30_000
"""API Gateway's integration timeout: a longer request is a 503 to the client."""


class LambdaThrottled(Exception):
    """The account's concurrency was reached: Lambda's TooManyRequestsException, which the
    HTTP API answers with a 503 (a retryable ServiceUnitNotReady to the SDK)."""

    code = "ServiceUnitNotReady"
    status = 503


class GatewayTimeout(Exception):
    """The request outlasted API Gateway's 30 s: the client got a 503."""

    code = "Timeout"
    status = 503


@dataclass
class _Container:
    engine: Engine
    busy: bool = False


@dataclass
class Lambdas:
    """The account's functions and their containers."""

    sim: Simulation
    profile: Profile
    make_engine: Callable[[], Engine]
    counting: bool = False
    invocations: Counter[str] = field(default_factory=Counter)
    billed_ms: float = 0.0
    cold_starts: int = 0
    throttles: int = 0
    on_cold_start: Callable[[float], None] | None = None
    """Told of each cold start's time (ms), in the greenlet that waits for it."""
    _pools: dict[str, list[_Container]] = field(default_factory=dict)

    @property
    def containers(self) -> int:
        return sum(len(pool) for pool in self._pools.values())

    @property
    def busy(self) -> int:
        """Requests running now: what Lambda's concurrency limit counts."""
        return sum(c.busy for pool in self._pools.values() for c in pool)

    def invoke(self, function: str, handler: Callable[[Engine], T]) -> T:
        """One HTTP request to ``function``: the edge's latency around a container running
        ``handler`` on its engine. Raises LambdaThrottled, GatewayTimeout, or what the
        handler raised (the service's answer)."""
        edge_ms = self.profile.edge.sample_ms(self.sim.rng)
        started = self.sim.now_ms
        self.sim.sleep(edge_ms / 2)
        container = self._container(function)
        began = self.sim.now_ms
        try:
            self.sim.sleep(self.profile.handler_cpu_ms)
            return handler(container.engine)
        finally:
            container.busy = False
            if self.counting:
                self.invocations[function] += 1
                self.billed_ms += self.sim.now_ms - began
            self.sim.sleep(edge_ms / 2)
            if self.sim.now_ms - started > GATEWAY_TIMEOUT_MS:
                raise GatewayTimeout(f"{function} answered after 30 s")

    def _container(self, function: str) -> _Container:
        pool = self._pools.setdefault(function, [])
        for container in pool:
            if not container.busy:
                container.busy = True
                return container
        if self.busy >= self.profile.lambda_concurrency:
            if self.counting:
                self.throttles += 1
            raise LambdaThrottled(f"{function}: the account's concurrency of "
                                  f"{self.profile.lambda_concurrency} is in use")  # fmt: skip
        container = _Container(self.make_engine(), busy=True)
        pool.append(container)  # counted now: concurrent starts share the limit
        if self.profile.cold_starts:
            if self.counting:
                self.cold_starts += 1
            cold_ms = self.profile.cold_start.sample_ms(self.sim.rng)
            if self.on_cold_start is not None:
                self.on_cold_start(cold_ms)
            self.sim.sleep(cold_ms)
        return container
