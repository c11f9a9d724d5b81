"""CloudWatch metrics of every invocation: one EMF record (Powertools' CloudWatch EMF
provider) per request, written as one log line.

Each record carries ``Requests`` (1), ``Errors`` (1, only on a 5xx), ``ClientErrors`` (1,
only on a 4xx), ``Latency`` (ms, the handler's own time) and what the request did
(``domain.metering``: ``MessagesIn``, ``BytesIn``, ``MessagesOut``, ``BytesOut``, ``Acks``,
``Nacks``, ``DeadLetterMoves``, ``TimerStarts``; only those not 0).

Dimensions, kept to what an operator filters on, since every distinct combination is a
custom metric billed by the month: ``service`` and ``route`` (API Gateway's route key, e.g.
``POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages``; a fixed set) on every record,
``service`` alone (the totals, and a latency p99 over every route), and a third set ``service, tenant, namespace`` on the data plane's records
(``/v1/`` routes): namespaces are created by operators, so that set grows with them, not
with traffic. Topic and subscription are never dimensions (made by clients, unbounded: a
producer per topic would mint metrics by the thousand); they are EMF *properties* of the
record instead, with the status code and the request id: searchable with CloudWatch Logs
Insights (``stats sum(MessagesIn) by topic``), free of metric charges.

The Powertools provider is ``EphemeralMetrics`` (per instance), not ``Metrics``, whose metric
set is shared by every instance of the process: the local gateway runs many containers'
handlers on threads of one process, and requests would mix their counts.

Records go to stdout (Lambda sends it to CloudWatch Logs, which extracts the metrics), or,
inside ``emitting(sink)`` (the local gateway), to ``sink`` as the EMF dict.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from magnetar_core.domain import metering

NAMESPACE = "Magnetar"
"""The CloudWatch metric namespace (``POWERTOOLS_METRICS_NAMESPACE`` overrides it)."""
SERVICE = "magnetar-api"
"""The ``service`` dimension: the Powertools service name of the handlers (``api.http``)."""

log = logging.getLogger("magnetar_core.metrics")
Emit = Callable[[dict[str, Any]], None]
_emit: ContextVar[Emit | None] = ContextVar("magnetar_emf_sink", default=None)


@contextmanager
def emitting(sink: Emit) -> Iterator[None]:
    """Within the block (this thread / context only), records go to ``sink`` instead of
    stdout (the local gateway collects them for ``GET /metrics``)."""
    token = _emit.set(sink)
    try:
        yield
    finally:
        _emit.reset(token)


class Measured:
    """One invocation being measured: ``status`` (HTTP status; 500 when the handler
    raised) is set by the caller; counts arrive through ``domain.metering``."""

    def __init__(self, route: str, path: Mapping[str, str] | None, request_id: str) -> None:
        self.route = route
        self.path = dict(path or {})
        self.request_id = request_id
        self.status = 200
        self.counts: dict[str, float] = {}

    def add(self, name: str, value: float) -> None:
        self.counts[name] = self.counts.get(name, 0) + value

    def record(self, latency_ms: float, timestamp_ms: int) -> dict[str, Any]:
        """The EMF record (a dict) of this invocation."""
        namespace = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or NAMESPACE
        metrics = EphemeralMetrics(namespace=namespace, service=SERVICE)
        metrics.add_dimension("route", self.route)
        path = self.path
        metrics.add_dimensions(service=SERVICE)  # the totals: all routes, p99 overall
        data_plane = self.route.split(" ")[-1].startswith("/v1/")
        if data_plane and path.get("tenant") and path.get("namespace"):
            metrics.add_dimensions(
                service=SERVICE, tenant=path["tenant"], namespace=path["namespace"]
            )
        metrics.add_metric("Requests", MetricUnit.Count, 1)
        if self.status >= 500:  # only when 1: a 0 costs log bytes, and no value sums as 0
            metrics.add_metric("Errors", MetricUnit.Count, 1)
        elif self.status >= 400:
            metrics.add_metric("ClientErrors", MetricUnit.Count, 1)
        metrics.add_metric("Latency", MetricUnit.Milliseconds, round(latency_ms, 3))
        for name, value in self.counts.items():
            unit = MetricUnit.Bytes if name in metering.BYTE_COUNTS else MetricUnit.Count
            metrics.add_metric(name, unit, value)
        metrics.add_metadata("status", self.status)
        metrics.add_metadata("requestId", self.request_id)
        topic = topic_of(path)
        if topic:
            metrics.add_metadata("topic", topic)
        if "subscription" in path:
            metrics.add_metadata("subscription", path["subscription"])
        metrics.set_timestamp(timestamp_ms)
        return dict(metrics.serialize_metric_set())


def topic_of(path: Mapping[str, str]) -> str | None:
    """``persistent://tenant/namespace/topic`` from a route's path parameters (None when
    the route names no topic)."""
    names = [path.get(k) for k in ("domain", "tenant", "namespace", "topic")]
    return f"{names[0]}://{names[1]}/{names[2]}/{names[3]}" if all(names) else None


def write(record: dict[str, Any]) -> None:
    """Send an EMF record: to the sink of ``emitting``, else stdout as one JSON line
    (nothing when ``POWERTOOLS_METRICS_DISABLED`` is true)."""
    sink = _emit.get()
    if sink is not None:
        sink(record)
    elif not is_metrics_disabled():
        print(json.dumps(record, separators=(",", ":")), flush=True)


@contextmanager
def measured(
    route: str,
    path: Mapping[str, str] | None = None,
    request_id: str = "",
    clock_ms: Callable[[], float] = lambda: time.perf_counter() * 1000,
    now_ms: Callable[[], float] = lambda: time.time() * 1000,
) -> Iterator[Measured]:
    """Measure the block as one invocation of ``route`` and write its record at the end
    (``status`` 500 when the block raises; the exception goes on). ``clock_ms`` is the
    monotonic clock of the latency, ``now_ms`` the record's timestamp (both ms)."""
    current = Measured(route, path, request_id)
    started = clock_ms()
    try:
        with metering.counting(current.add):
            yield current
    except BaseException:
        current.status = 500
        raise
    finally:
        try:
            write(current.record(clock_ms() - started, int(now_ms())))
        except Exception:  # a metric never fails the request it measures
            log.exception("the metrics of %s (request %s) were not written", route, request_id)


ServedRoute = Callable[[Mapping[str, Any]], "tuple[str, dict[str, str]] | None"]
"""The route key and decoded path parameters of the app route an event's path takes."""


def http_measured(
    handle: Callable[[dict, Any], dict], served_route: ServedRoute | None = None
) -> Callable[[dict, Any], dict]:
    """``handle`` (an HTTP API payload 2.0 entry point) measured: the route is the event's
    ``routeKey``, the status its answer's ``statusCode``. An event of a greedy route
    (``ANY /admin/{proxy+}``, the app routes by path) is measured as the route
    ``served_route`` finds for it (its path parameters too), as if it had a route of its
    own; as the greedy route when none does (the app's 404)."""

    @wraps(handle)
    def measured_handle(event: dict, context: Any) -> dict:
        request = event.get("requestContext") or {}
        route = event.get("routeKey") or request.get("routeKey") or "$default"
        path = event.get("pathParameters")
        if served_route is not None and route.endswith("+}"):
            route, path = served_route(event) or (route, path)
        with measured(route, path, request.get("requestId", "")) as m:
            response = handle(event, context)
            m.status = int(response.get("statusCode", 200))
        return response

    return measured_handle


def invocation_measured(route: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator measuring a non-HTTP entry point (ingest, trigger fan-out, function
    runner, authorizer) as ``route``: status 200, or 500 when it raises."""

    def wrap(handle: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(handle)
        def measured_handle(event: Any, context: Any) -> Any:
            request_id = str(getattr(context, "aws_request_id", "") or "")
            with measured(route, None, request_id):
                return handle(event, context)

        return measured_handle

    return wrap
