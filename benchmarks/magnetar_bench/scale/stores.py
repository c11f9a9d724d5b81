"""Store adapters over the in-memory ones that take the time, capacity and retries of the
AWS requests the AWS adapters would make (``requests.aws_requests``).

A call through a ``ModelledStore`` is: the first request's capacity check (throttled
attempts retried as botocore does, then ``TooManyRequests`` as ``adapters.aws.clients.
translated`` turns the throttling ClientError into), half its latency, the memory
adapter's call (its effect lands then), the other half, then the call's further requests
(pages, the read after a lost conditional write) one after another. Requests and units are
counted on the model's ``Meter`` while it counts.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from magnetar_bench.scale.capacity import Capacity, Retrier, throttling_error
from magnetar_bench.scale.profile import Profile
from magnetar_bench.scale.requests import Request, aws_requests
from magnetar_bench.scale.sim import Simulation
from magnetar_core.adapters.aws.clients import translated
from magnetar_core.ports import Stores

WRITES = {
    "dynamodb.PutItem", "dynamodb.UpdateItem", "dynamodb.DeleteItem",
    "dynamodb.BatchWriteItem", "dynamodb.TransactWriteItems", "s3.PutObject",
    "s3.DeleteObject",
}  # fmt: skip


@dataclass
class Meter:
    """What the AWS side did while ``counting``: requests by operation (each attempt that
    was served), throttled attempts by operation, DynamoDB units."""

    counting: bool = False
    requests: Counter[str] = field(default_factory=Counter)
    throttled: Counter[str] = field(default_factory=Counter)
    write_units: float = 0.0
    read_units: float = 0.0

    def served(self, request: Request) -> None:
        if self.counting:
            self.requests[request.operation] += 1
            if request.operation.startswith("dynamodb."):
                self.write_units += request.write_units
                self.read_units += request.read_units


@dataclass
class AwsModel:
    """The model's AWS: one clock, one profile, one set of per-key buckets, one meter.
    ``free`` lets calls through with no time, capacity or count (setting a run up)."""

    sim: Simulation
    profile: Profile
    meter: Meter = field(default_factory=Meter)
    free: bool = False
    on_call: Callable[[str, str, BaseException | None], None] | None = None
    """Told of every modelled store call (store, method, what it raised)."""

    def __post_init__(self) -> None:
        self.capacity = Capacity(self.profile)

    def stores(self, memory: Stores) -> Stores:
        """``memory``'s stores behind this model, with a retry state of their own (one
        Lambda container's boto3 clients)."""
        retrier = Retrier(self.profile)
        wrapped = {
            f.name: ModelledStore(f.name, getattr(memory, f.name), self, retrier)
            for f in dataclasses.fields(memory)
        }
        return Stores(**wrapped)

    def call(self, store: str, method: str, fn: Callable[..., Any], args: tuple,
             kwargs: dict[str, Any], retrier: Retrier) -> Any:  # fmt: skip
        if self.free:
            return fn(*args, **kwargs)
        positional = (*args, *kwargs.values())
        planned = aws_requests(store, method, positional)
        if not planned:
            return fn(*args, **kwargs)
        first = planned[0]
        self._admit(first, retrier)
        latency_ms = self.profile.latency(first.operation).sample_ms(self.sim.rng)
        self.sim.sleep(latency_ms / 2)
        result: Any = None
        error: BaseException | None = None
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:  # the adapter's answer: raised after its requests
            error = exc
        self.sim.sleep(latency_ms / 2)
        made = aws_requests(store, method, positional, result, error)
        if self.on_call is not None:
            self.on_call(store, method, error)
        self._served(made[0])
        for request in made[1:]:
            self._admit(request, retrier)
            self.sim.sleep(self.profile.latency(request.operation).sample_ms(self.sim.rng))
            self._served(request)
        if error is not None:
            raise error
        return result

    def _served(self, request: Request) -> None:
        self.capacity.debit(request.key, request.write_units, request.read_units, self.sim.now_ms)
        self.meter.served(request)

    def _admit(self, request: Request, retrier: Retrier) -> None:
        """Wait until the request's key admits it, as botocore retries throttling; raises
        TooManyRequests when botocore would give up."""
        write = request.operation in WRITES
        attempt = 1
        while not self.capacity.admits(request.key, write, self.sim.now_ms):
            if self.meter.counting:
                self.meter.throttled[request.operation] += 1
            self.sim.sleep(self.profile.latency(request.operation).sample_ms(self.sim.rng))
            wait_ms = retrier.backoff_ms(attempt, self.sim.rng.random())
            if wait_ms is None:
                with translated(f"{request.operation} on {request.key}"):
                    raise throttling_error(request.operation)
            self.sim.sleep(wait_ms)
            attempt += 1
        retrier.succeeded(attempt - 1)


class ModelledStore:
    """One store of a container: every public method goes through ``AwsModel.call``."""

    def __init__(self, name: str, inner: Any, model: AwsModel, retrier: Retrier) -> None:
        self._name = name
        self._inner = inner
        self._model = model
        self._retrier = retrier

    def __getattr__(self, method: str) -> Any:
        attr = getattr(self._inner, method)
        if method.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._model.call(self._name, method, attr, args, kwargs, self._retrier)

        self.__dict__[method] = call
        return call
