"""moto's server with keep-alive connections (``magnetar_local.moto_keepalive``) answers as
moto's own handler does, byte for byte but for the ``Connection`` header and the headers
that differ between any two answers (date, request id), and serves several requests on one
connection, however much of a body the application read."""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Iterator

import pytest
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from magnetar_local.moto_keepalive import KeepAliveRequestHandler, request_body_length

VOLATILE = {"date", "x-amzn-requestid", "x-amz-request-id", "x-amz-id-2", "connection"}
TARGET = "DynamoDB_20120810."
AUTH = "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/{}/aws4_request, SignedHeaders=host, Signature=0"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, int]]:
    """Two moto servers on one application (one set of backends): moto's handler, ours."""
    app = DomainDispatcherApplication(create_backend_app)
    ports, running = {}, []
    for name, handler in (("moto", MotoRequestHandler), ("keepalive", KeepAliveRequestHandler)):
        server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        ports[name] = server.server_port
        running.append(server)
    yield ports
    for server in running:
        server.shutdown()
        server.server_close()


def dynamodb(action: str, body: dict) -> tuple[str, str, bytes, dict[str, str]]:
    headers = {
        "X-Amz-Target": TARGET + action,
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": AUTH.format("dynamodb"),
    }
    return "POST", "/", json.dumps(body).encode(), headers


def s3(method: str, path: str, body: bytes = b"") -> tuple[str, str, bytes, dict[str, str]]:
    return method, path, body, {"Authorization": AUTH.format("s3")}


def answer(conn: http.client.HTTPConnection, request: tuple) -> tuple[int, dict, bytes]:
    method, path, body, headers = request
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    kept = {k.lower(): v for k, v in response.getheaders() if k.lower() not in VOLATILE}
    return response.status, kept, re.sub(rb"<RequestId>[^<]*</RequestId>", b"", data)


def test_a_request_with_or_without_a_body_is_framed_by_its_content_length() -> None:
    from email.message import Message

    def headers(**fields: str) -> Message:
        message = Message()
        for name, value in fields.items():
            message[name.replace("_", "-")] = value
        return message

    assert request_body_length(headers()) == 0
    assert request_body_length(headers(Content_Length="12")) == 12
    assert request_body_length(headers(Transfer_Encoding="chunked")) is None
    assert request_body_length(headers(Content_Length="5", Expect="100-continue")) is None
    assert request_body_length(headers(Content_Length="-1")) is None
    assert request_body_length(headers(Content_Length="1e3")) is None


def test_dynamodb_and_s3_answers_are_motos_own_and_share_one_connection(servers) -> None:
    key = {"pk": {"S": "k"}}
    table = {
        "TableName": "kept",
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    }
    setup = [dynamodb("CreateTable", table), s3("PUT", "/kept-bucket")]
    conditional = {"ConditionExpression": "attribute_not_exists(pk)"}
    compared = [  # each answered the same the second time: moto's first, then ours
        dynamodb("PutItem", {"TableName": "kept", "Item": {**key, "v": {"B": "AAEC"}}}),
        dynamodb("GetItem", {"TableName": "kept", "Key": key, "ConsistentRead": True}),
        dynamodb("PutItem", {"TableName": "kept", "Item": key, **conditional}),
        dynamodb("GetItem", {"TableName": "missing", "Key": key}),
        s3("PUT", "/kept-bucket/an/object", b"x" * 70_000),
        s3("GET", "/kept-bucket/an/object"),
        s3("HEAD", "/kept-bucket/an/object"),
        s3("GET", "/kept-bucket/absent"),
    ]
    moto = http.client.HTTPConnection("127.0.0.1", servers["moto"], timeout=10)
    for request in setup:
        assert answer(moto, request)[0] == 200
    ours = http.client.HTTPConnection("127.0.0.1", servers["keepalive"], timeout=10)
    statuses, sockets = [], set()
    for request in compared:
        expected = answer(moto, request)
        assert answer(ours, request) == expected
        statuses.append(expected[0])
        sockets.add(id(ours.sock))
    assert statuses == [200, 200, 400, 400, 200, 200, 200, 404]
    assert len(sockets) == 1 and ours.sock is not None  # one connection, still open
    ours.close()
    moto.close()


def test_the_next_request_is_read_after_a_body_the_application_left_unread() -> None:
    def unread_body(environ: dict, start_response) -> list[bytes]:
        path = environ["PATH_INFO"].encode()
        start_response("200 OK", [("Content-Length", str(len(path)))])
        return [path]

    server = make_server(
        "127.0.0.1", 0, unread_body, threaded=True, request_handler=KeepAliveRequestHandler
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
        smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n" * 50  # a body, not requests
        conn.request("POST", "/first", body=smuggled)
        first = conn.getresponse()
        assert (first.status, first.read()) == (200, b"/first")
        sock = conn.sock
        conn.request("GET", "/second")
        second = conn.getresponse()
        assert (second.status, second.read()) == (200, b"/second")
        assert conn.sock is sock and second.getheader("Connection") is None
        conn.close()
    finally:
        server.shutdown()
        server.server_close()


def test_a_chunked_request_is_answered_as_werkzeug_does_and_its_connection_closed(
    servers,
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", servers["keepalive"], timeout=10)
    request = dynamodb("ListTables", {})
    conn.request("POST", "/", body=iter([request[2]]), headers=request[3], encode_chunked=True)
    response = conn.getresponse()
    assert response.status == 200 and "TableNames" in json.loads(response.read())
    assert response.getheader("Connection") == "close"
    conn.close()
