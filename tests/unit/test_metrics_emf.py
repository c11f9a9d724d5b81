"""The handlers' CloudWatch metrics: one EMF line per invocation on stdout (as Lambda ships it
to CloudWatch Logs), topic and subscription as properties, never as dimensions."""

from __future__ import annotations

import base64
import json

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.api import metrics
from magnetar_core.api.http import injected_engine
from magnetar_core.domain import metering
from magnetar_core.engine import Engine
from magnetar_local.events import HttpRequest, LambdaContext, build_event
from magnetar_local.handlers import HandlerLoader
from magnetar_local.memory_service import memory_settings
from magnetar_local.routes import RouteTable
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate
from magnetar_local.tenancy import ensure_namespaces

PRODUCE_ROUTE = "POST /v1/{domain}/{tenant}/{namespace}/{topic}/messages"


@pytest.fixture(scope="module")
def template() -> LocalTemplate:
    return LocalTemplate(DEFAULT_TEMPLATE)


@pytest.fixture(scope="module")
def produce(template):
    """The produce handler (functions/produce/app.py) on an in-memory engine."""
    engine = Engine.assemble(memory_settings(), memory_stores())
    ensure_namespaces(engine, "acme/orders")
    with injected_engine(engine):
        return HandlerLoader._load(template.functions["ProduceFunction"], 9001)


def _call(handler, template, path: str, body: bytes) -> dict:
    request = HttpRequest("POST", path, "", [("content-type", "application/json")], body)
    match = RouteTable(template.routes).match("POST", path)
    assert match is not None
    return handler(build_event(request, match), LambdaContext("produce", 256, 30))


def _emf_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"_aws"')]


def test_a_produce_prints_one_emf_line_with_its_messages_and_the_topic_as_a_property(
    produce, template, capsys
):
    payload = base64.b64encode(b"hello").decode()
    body = json.dumps({"messages": [{"payload": payload}, {"payload": payload}]}).encode()
    answer = _call(produce, template, "/v1/persistent/acme/orders/checkout/messages", body)
    assert answer["statusCode"] == 200
    [record] = _emf_lines(capsys.readouterr().out)
    [directive] = record["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "Magnetar"
    assert directive["Dimensions"] == [
        ["route", "service"], ["service"], ["service", "tenant", "namespace"]
    ]  # fmt: skip
    names = {m["Name"] for m in directive["Metrics"]}
    assert names == {"Requests", "Latency", "MessagesIn", "BytesIn"}
    assert (record["route"], record["tenant"], record["namespace"]) == (
        PRODUCE_ROUTE,
        "acme",
        "orders",
    )
    assert (record["Requests"], record["MessagesIn"]) == ([1.0], [2.0])
    assert record["BytesIn"][0] > 10 and record["Latency"][0] >= 0
    assert record["topic"] == "persistent://acme/orders/checkout"
    assert record["status"] == 200
    dimensions = {name for group in directive["Dimensions"] for name in group}
    assert "topic" not in dimensions and "subscription" not in dimensions


def test_a_refused_produce_counts_a_client_error_and_no_message(produce, template, capsys):
    answer = _call(produce, template, "/v1/persistent/acme/orders/checkout/messages", b"{}")
    assert answer["statusCode"] == 400
    [record] = _emf_lines(capsys.readouterr().out)
    names = {m["Name"] for m in record["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert names == {"Requests", "Latency", "ClientErrors"}
    assert (record["ClientErrors"], record["status"]) == ([1.0], 400)


def test_an_admin_request_through_the_greedy_route_is_measured_as_its_admin_route(template, capsys):
    engine = Engine.assemble(memory_settings(), memory_stores())
    ensure_namespaces(engine, "acme/orders")
    with injected_engine(engine):
        admin = HandlerLoader._load(template.functions["AdminFunction"], 9002)
    table = RouteTable(template.routes)  # ANY /admin/{proxy+}: one route for every admin path
    for method, path in (("GET", "/admin/v2/persistent/acme/orders/a%3Ab/stats"),
                         ("GET", "/admin/v2/nothing/here")):  # fmt: skip
        match = table.match(method, path)
        assert match is not None and match.route.route_key == "ANY /admin/{proxy+}"
        event = build_event(HttpRequest(method, path, "", [], b""), match)
        admin(event, LambdaContext("admin", 256, 30))
    stats, unknown = _emf_lines(capsys.readouterr().out)
    assert stats["route"] == "GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/stats"
    assert (stats["topic"], stats["status"]) == ("persistent://acme/orders/a:b", 404)
    assert (unknown["route"], unknown["status"]) == ("ANY /admin/{proxy+}", 404)


def test_an_entry_point_that_raises_is_measured_as_an_error_and_the_exception_goes_on():
    records: list[dict] = []

    @metrics.invocation_measured("ingest")
    def failing(event, context):
        metering.count(metering.MESSAGES_IN, 3)
        raise RuntimeError("storage down")

    with metrics.emitting(records.append), pytest.raises(RuntimeError):
        failing({}, None)
    [record] = records
    assert (record["route"], record["status"]) == ("ingest", 500)
    assert (record["Errors"], record["MessagesIn"]) == ([1.0], [3.0])
    assert record["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [
        ["route", "service"],
        ["service"],
    ]


def test_counts_made_outside_a_measured_invocation_go_nowhere():
    records: list[dict] = []
    with metrics.emitting(records.append):
        metering.count(metering.ACKS, 5)  # no invocation being measured: nothing happens
        with metrics.measured("POST /x", {}, "r1"):
            with metering.uncounted():
                metering.count(metering.MESSAGES_IN, 1)  # the dead letter publish
            metering.count(metering.DEAD_LETTER_MOVES, 1)
    [record] = records
    assert "MessagesIn" not in record and "Acks" not in record
    assert record["DeadLetterMoves"] == [1.0]


def test_the_dashboard_charts_only_metrics_the_handlers_emit(template):
    body = template.resources["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    body = body.replace("${AWS::Region}", "us-east-1")
    body = body.replace("${RedeliveryTimerStateMachine}", "arn:aws:states:::stateMachine:t")
    widgets = json.loads(body)["widgets"]
    emitted = {"Requests", "Errors", "ClientErrors", "Latency"} | {
        getattr(metering, name)
        for name in dir(metering)
        if name.isupper() and name != "BYTE_COUNTS"
    }
    charted = set()
    for widget in widgets:
        for row in widget["properties"]["metrics"]:
            if isinstance(row[0], dict):
                charted.add(row[0]["expression"].split('MetricName="')[1].split('"')[0])
            elif row[0] == "AWS/States":  # the timer executions themselves
                assert row[1:3] == ["ExecutionsSucceeded", "StateMachineArn"]
            else:
                assert row[0] == metrics.NAMESPACE and row[2:4] == ["service", metrics.SERVICE]
                charted.add(row[1])
    assert charted <= emitted
    assert {
        "Requests",
        "Errors",
        "Latency",
        "MessagesIn",
        "MessagesOut",
        "DeadLetterMoves",
    } <= charted
