"""The embedded stack: provisioned resources, real Step Functions execution, the gateway."""

from __future__ import annotations

import datetime
import http.client
import json
import logging
import threading
import time
import uuid
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.emulator


def _key_schema(aws_clients, name: str) -> dict[str, str]:
    table = aws_clients.dynamodb.describe_table(TableName=name)["Table"]
    return {key["AttributeName"]: key["KeyType"] for key in table["KeySchema"]}


def test_the_stack_has_the_four_tables_with_the_template_keys(local_stack, aws_clients):
    for table in local_stack.template.tables:
        expected = {
            key["AttributeName"]: key["KeyType"] for key in table.create_kwargs["KeySchema"]
        }
        assert _key_schema(aws_clients, table.name) == expected
    assert {table.logical_id for table in local_stack.template.tables} == {
        "TopicsTable",
        "LogTable",
        "CursorsTable",
        "NotifyTable",
    }
    assert _key_schema(aws_clients, local_stack.name("TopicsTable"))["pk"] == "HASH"
    assert _key_schema(aws_clients, "magnetar-log") == {"pk": "HASH", "eid": "RANGE"}
    assert _key_schema(aws_clients, "magnetar-cursors") == {"pk": "HASH", "sub": "RANGE"}
    ttl = aws_clients.dynamodb.describe_time_to_live(TableName="magnetar-cursors")
    assert ttl["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
    assert _key_schema(aws_clients, "magnetar-notify") == {"pk": "HASH", "sk": "RANGE"}


def test_the_stack_has_the_entries_bucket_and_handlers_see_its_names(local_stack, aws_clients):
    buckets = {bucket["Name"] for bucket in aws_clients.s3.list_buckets()["Buckets"]}
    assert local_stack.name("EntriesBucket") in buckets
    environment = local_stack.environment
    assert environment["ENTRIES_BUCKET"] == local_stack.name("EntriesBucket")
    assert environment["CURSORS_TABLE"] == "magnetar-cursors"
    assert environment["AWS_ENDPOINT_URL"] == local_stack.aws_endpoint_url
    assert environment["RECEIVE_MAX_WAIT_MS"] == "20000"


def _run(sfn, machine, key: dict, due: datetime.datetime) -> str:
    """Start the timer of one bucket due at ``due`` and wait for its end; returns the status."""
    bucket = int(due.timestamp() * 1000)
    execution = sfn.start_execution(  # moto 5.2.5 needs a name with execution on
        stateMachineArn=machine.arn,
        name=uuid.uuid4().hex,
        input=json.dumps(
            {
                "pk": key["pk"]["S"],
                "sub": key["sub"]["S"],
                "bucket": bucket,
                "buckets": [str(bucket)],
                "dueAt": due.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        ),
    )
    deadline = time.monotonic() + 20
    status = "RUNNING"
    while status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.05)
        status = sfn.describe_execution(executionArn=execution["executionArn"])["status"]
    return status


def test_the_redelivery_timer_releases_its_bucket_on_the_cursor_and_bumps_its_version(
    local_stack, aws_clients
):
    sfn, dynamodb = aws_clients.stepfunctions, aws_clients.dynamodb
    machine = next(
        m
        for m in local_stack.template.state_machines
        if m.logical_id == "RedeliveryTimerStateMachine"
    )
    key = {"pk": {"S": f"topic-{uuid.uuid4().hex}"}, "sub": {"S": "sub-1"}}
    dynamodb.put_item(TableName="magnetar-cursors", Item={**key, "ver": {"N": "7"}})
    due = datetime.datetime.now(datetime.UTC).replace(microsecond=0) + datetime.timedelta(seconds=2)

    assert _run(sfn, machine, key, due) == "SUCCEEDED"

    # the emulator's Wait truncates to whole seconds: it may fire up to 1 s early
    assert datetime.datetime.now(datetime.UTC) >= due - datetime.timedelta(seconds=1)
    item = dynamodb.get_item(TableName="magnetar-cursors", Key=key, ConsistentRead=True)["Item"]
    assert item["rel"] == {"NS": [str(int(due.timestamp() * 1000))]}
    assert item["ver"] == {"N": "8"}


def test_the_redelivery_timer_leaves_a_deleted_cursor_deleted(local_stack, aws_clients):
    sfn, dynamodb = aws_clients.stepfunctions, aws_clients.dynamodb
    machine = next(
        m
        for m in local_stack.template.state_machines
        if m.logical_id == "RedeliveryTimerStateMachine"
    )
    key = {"pk": {"S": f"topic-{uuid.uuid4().hex}"}, "sub": {"S": "gone"}}
    due = datetime.datetime.now(datetime.UTC).replace(microsecond=0)

    assert _run(sfn, machine, key, due) == "SUCCEEDED"

    assert "Item" not in dynamodb.get_item(TableName="magnetar-cursors", Key=key)


@pytest.fixture
def echo_route(local_stack):
    """A temporary route whose handler returns the event it got (and records it)."""
    seen: list[dict] = []

    def handler(event, context):
        seen.append(event)
        return {
            "statusCode": 200,
            "headers": {"content-type": "application/json"},
            "cookies": ["a=1"],
            "body": json.dumps({"event": event, "function": context.function_name}),
        }

    route = local_stack.gateway.add_route("POST", "/test/echo/{name}", handler, name="EchoFunction")
    yield seen
    local_stack.gateway.remove_route(route)


def _connection(local_stack) -> http.client.HTTPConnection:
    url = urlsplit(local_stack.url)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def test_the_gateway_turns_a_request_into_a_version_2_event_and_back(local_stack, echo_route):
    connection = _connection(local_stack)
    connection.request(
        "POST",
        "/test/echo/a%20b?x=1&x=2",
        body=b'{"hello": 1}',
        headers={"Content-Type": "application/json", "Cookie": "k=v"},
    )
    response = connection.getresponse()
    document = json.loads(response.read())
    assert response.status == 200 and response.getheader("Set-Cookie") == "a=1"
    event = document["event"]
    assert document["function"] == "EchoFunction"
    assert event["routeKey"] == "POST /test/echo/{name}"
    assert event["pathParameters"] == {"name": "a b"}
    assert event["queryStringParameters"] == {"x": "1,2"}
    assert event["cookies"] == ["k=v"] and event["body"] == '{"hello": 1}'
    assert event["requestContext"]["http"]["method"] == "POST"
    assert event["headers"]["host"] == urlsplit(local_stack.url).netloc


def test_the_gateway_keeps_connections_alive_with_content_length(local_stack, echo_route):
    connection = _connection(local_stack)
    for index in range(3):
        connection.request(
            "POST",
            f"/test/echo/{index}",
            body=b"\x00\xff",
            headers={"Content-Type": "application/octet-stream"},
        )
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200
        assert int(response.getheader("Content-Length")) == len(body)
    assert [event["isBase64Encoded"] for event in echo_route] == [True, True, True]
    assert echo_route[0]["body"] == "AP8="


def test_a_blocking_handler_does_not_starve_other_requests(local_stack):
    release = threading.Event()
    local_stack.gateway.add_route("GET", "/test/block", lambda e, c: release.wait(10) and "done")
    blocked = threading.Thread(target=lambda: _get(local_stack, "/test/block"), daemon=True)
    blocked.start()
    try:
        assert _get(local_stack, "/test/unknown")[0] == 404  # answered while one handler waits
    finally:
        release.set()
        blocked.join(10)


def _get(local_stack, path: str) -> tuple[int, bytes]:
    connection = _connection(local_stack)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read()


def test_an_unknown_route_is_a_404_json_error(local_stack):
    status, body = _get(local_stack, "/v2/nothing/here")
    assert status == 404
    assert json.loads(body)["error"] == "NotFound"


def test_an_admin_path_nobody_serves_is_the_admin_apps_404_json_error(local_stack):
    # ANY /admin/{proxy+} takes it (one route, one Lambda permission); the app routes by path
    # (the guard lets them through: no route, nothing to authorize, nothing told)
    for method, path in (("GET", "/admin/v2/nothing/here"), ("PATCH", "/admin/v2/tenantz/acme"),
                         ("POST", "/admin/v2/brokers/wealth"), ("GET", "/admin/v9")):  # fmt: skip
        connection = _connection(local_stack)
        connection.request(method, path, headers={"Authorization": "Bearer x"})
        response = connection.getresponse()
        body = json.loads(response.read())
        assert (response.status, response.getheader("Content-Type")) == (404, "application/json")
        assert body == {"error": "NotFound", "message": f"No route for {method} {path}"}
    assert _get(local_stack, "/admin/v2/brokers/health") == (200, b"ok")


def test_an_admin_path_served_under_other_methods_is_the_admin_apps_405_naming_them(local_stack):
    connection = _connection(local_stack)
    connection.request("POST", "/admin/v2/brokers/health", headers={"Authorization": "Bearer x"})
    response = connection.getresponse()
    body = json.loads(response.read())
    assert (response.status, response.getheader("Allow")) == (405, "GET")
    assert body["error"] == "NotAllowed" and "use GET" in body["message"]


def test_a_failing_handler_is_a_502_like_api_gateway_in_the_documented_error_shape(local_stack):
    def explode(event, context):
        raise RuntimeError("boom")

    route = local_stack.gateway.add_route("GET", "/test/explode", explode)
    try:
        status, body = _get(local_stack, "/test/explode")
    finally:
        local_stack.gateway.remove_route(route)
    error = json.loads(body)
    assert (status, set(error), error["error"]) == (502, {"error", "message"}, "UnknownError")
    assert error["message"].startswith("Internal Server Error") and "boom" not in error["message"]


def test_magnetar_local_refuses_a_taken_port_with_exit_code_1(local_stack, capsys):
    from magnetar_core.api.http import SERVICE
    from magnetar_local.main import run

    level = logging.getLogger(SERVICE).level
    assert run(["--port", str(local_stack.gateway.port), "--ephemeral"]) == 1
    assert "is in use" in capsys.readouterr().err
    assert logging.getLogger(SERVICE).level == level  # later tests still hear the handlers
