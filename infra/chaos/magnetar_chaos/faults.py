"""Faults injected at the engine's AWS calls, through botocore's event system.

A ``FaultPlan`` says which faults, how often (a probability per AWS request attempt) and on
which operations; a ``FaultInjector`` draws from a seeded RNG on every attempt of a client
it is installed on (``install(client)``: a ``before-send`` handler) and counts what it did.
The kinds, as AWS shows them to the SDK:

- ``throttle``: DynamoDB ``ProvisionedThroughputExceededException`` / S3 ``SlowDown`` (503) /
  Step Functions ``ThrottlingException``: botocore retries it (standard mode, 4 attempts),
  then the engine sees ``TooManyRequests``;
- ``5xx``: ``InternalServerError`` (500): retried by botocore, then a ``StorageFault``;
- ``timeout``: ``ReadTimeoutError``, half of the time *after* the request reached the
  emulator (it was applied, the answer was lost): retried by botocore;
- ``die``: ``InvocationAbandoned`` before or (half of the time) after the request was
  applied: the whole Lambda invocation ends here, the gateway answers 504 and the SDK
  retries as it does against API Gateway.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import ReadTimeoutError
from botocore.httpsession import URLLib3Session

from magnetar_local.handlers import InvocationAbandoned

KINDS = ("throttle", "5xx", "timeout", "die")

OPERATIONS = (
    "dynamodb.GetItem", "dynamodb.PutItem", "dynamodb.UpdateItem", "dynamodb.DeleteItem",
    "dynamodb.Query", "dynamodb.TransactWriteItems", "dynamodb.BatchGetItem",
    "dynamodb.BatchWriteItem", "s3.PutObject", "s3.GetObject", "s3.CopyObject",
    "s3.HeadObject", "s3.DeleteObject", "s3.ListObjectsV2", "stepfunctions.StartExecution",
)  # fmt: skip
"""The engine's AWS operations a plan covers by default (``service.Operation``)."""


@dataclass(frozen=True)
class FaultPlan:
    """What to inject: each AWS request attempt of an operation in ``operations`` fails with
    probability ``rate_per_call``, with a kind drawn uniformly from ``kinds`` (``die``
    weighted by ``die_weight``: it costs a whole request). Raises ValueError for an unknown
    kind or a rate outside [0, 1]."""

    rate_per_call: float = 0.05
    kinds: tuple[str, ...] = KINDS
    operations: frozenset[str] = frozenset(OPERATIONS)
    seed: int = 1
    die_weight: float = 0.5

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
        if not 0 <= self.rate_per_call <= 1:
            raise ValueError(f"rate_per_call must be within [0, 1], not {self.rate_per_call}")

    @classmethod
    def parse(cls, kinds: str, rate: float, seed: int) -> FaultPlan:
        """From ``--faults throttle,5xx,timeout,die --rate 0.05 --seed 1`` (``none``: no
        faults)."""
        names = tuple(k.strip() for k in kinds.split(",") if k.strip() and k.strip() != "none")
        return cls(rate_per_call=rate if names else 0.0, kinds=names, seed=seed)


class _Body:
    """The raw body of a made-up response (what ``AWSResponse`` reads through ``stream``)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Iterable[bytes]:
        yield self.data


def _error_response(service: str, url: str, kind: str) -> AWSResponse:
    """The response AWS sends for a throttled or failed ``service`` request."""
    if service == "s3":
        code, status = ("SlowDown", 503) if kind == "throttle" else ("InternalError", 500)
        body = (f"<Error><Code>{code}</Code><Message>injected</Message></Error>").encode()
        return AWSResponse(url, status, {"Content-Type": "application/xml"}, _Body(body))
    if kind == "throttle":
        name = (
            "ProvisionedThroughputExceededException"
            if service == "dynamodb"
            else "ThrottlingException"
        )
        status = 400
    else:
        name, status = "InternalServerError", 500
    body = json.dumps({"__type": f"com.amazonaws#{name}", "message": "injected"}).encode()
    return AWSResponse(url, status, {"Content-Type": "application/x-amz-json-1.0"}, _Body(body))


@dataclass
class FaultInjector:
    """Draws and injects the faults of ``plan`` on the clients it is installed on; counts
    them by ``kind`` and ``service.Operation`` (``injected``). Thread-safe."""

    plan: FaultPlan
    injected: Counter[tuple[str, str]] = field(default_factory=Counter)
    calls: int = 0
    enabled: bool = True

    def __post_init__(self) -> None:
        self._rng = random.Random(self.plan.seed)
        self._lock = threading.Lock()
        self._http = URLLib3Session()

    def install(self, client: Any) -> Any:
        """Inject into ``client`` (a boto3 client); returns it."""
        client.meta.events.register("before-send.*.*", self._before_send)
        return client

    def _draw(self, operation: str) -> tuple[str, bool] | None:
        """(kind, after the request is applied) for this attempt, or None."""
        plan = self.plan
        with self._lock:
            self.calls += 1
            if not self.enabled or operation not in plan.operations or not plan.kinds:
                return None
            if self._rng.random() >= plan.rate_per_call:
                return None
            weights = [plan.die_weight if k == "die" else 1.0 for k in plan.kinds]
            kind = self._rng.choices(plan.kinds, weights)[0]
            after = kind in ("timeout", "die") and self._rng.random() < 0.5
            self.injected[(kind + ("-after" if after else ""), operation)] += 1
            return kind, after

    def _before_send(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        # event_name: before-send.<service id>.<Operation>, e.g. before-send.dynamodb.PutItem
        _event, service_id, operation = event_name.split(".", 2)
        service_name = {"sfn": "stepfunctions"}.get(service_id.lower(), service_id.lower())
        drawn = self._draw(f"{service_name}.{operation}")
        if drawn is None:
            return None
        kind, after = drawn
        if after:  # applied on the emulator; the answer is lost (and so is any failure)
            with contextlib.suppress(Exception):
                self._http.send(request)
        if kind == "die":
            raise InvocationAbandoned(f"injected: the handler dies at {service_name}.{operation}")
        if kind == "timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        return _error_response(service_name, request.url, kind)

    def summary(self) -> dict[str, Any]:
        """``{"calls": n, "injected": {kind: {operation: n}}, "total": n}``."""
        with self._lock:
            by_kind: dict[str, dict[str, int]] = {}
            for (kind, operation), n in sorted(self.injected.items()):
                by_kind.setdefault(kind, {})[operation] = n
            return {"calls": self.calls, "total": sum(self.injected.values()),
                    "injected": by_kind}  # fmt: skip
