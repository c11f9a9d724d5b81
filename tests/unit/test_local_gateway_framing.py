"""The local gateway answers a request it cannot frame (a bad Content-Length or chunk size)
with 400 in the documented error shape at once, and closes that connection (issue 11,
defect 7)."""

from __future__ import annotations

import json
import socket

import pytest

from magnetar_local.gateway import Gateway


@pytest.fixture
def gateway():
    gateway = Gateway([], {}).start()
    gateway.add_route("POST", "/echo", lambda event, context: {"got": event.get("body")})
    yield gateway
    gateway.stop()


def exchange(gateway: Gateway, raw: bytes) -> tuple[int, dict, bytes]:
    """Send ``raw``; (status, JSON body, what followed) once the server closes."""
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as conn:
        conn.sendall(raw)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    length = int(headers["Content-Length"])
    assert headers.get("Connection") == "close"
    return int(lines[0].split()[1]), json.loads(rest[:length]), rest[length:]


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "", "10, 12"])
def test_a_content_length_that_is_not_a_non_negative_integer_is_a_400_at_once(gateway, value):
    raw = f"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {value}\r\n\r\n{{}}".encode()
    status, body, after = exchange(gateway, raw)
    assert (status, body["error"]) == (400, "InvalidMessage")
    assert "Content-Length" in body["message"] and after == b""


def test_a_chunk_size_that_is_not_hexadecimal_is_a_400(gateway):
    raw = (
        b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
    )
    status, body, _ = exchange(gateway, raw)
    assert (status, body["error"]) == (400, "InvalidMessage") and "chunk" in body["message"]


def test_a_well_framed_request_still_works_and_keeps_the_connection(gateway):
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as conn:
        for _ in range(2):
            conn.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            received = b""
            while not received.endswith(b"}"):
                received += conn.recv(65536)
            assert received.startswith(b"HTTP/1.1 200") and received.endswith(b'{"got": "e30="}')


@pytest.mark.parametrize(
    ("request_line", "status", "words"),
    [
        (b"GET /" + b"a" * 100_000 + b" HTTP/1.1", 414, "URI Too Long"),
        (b"GET /echo\x0bx HTTP/1.1", 400, "Bad request syntax"),
        (b"GET /echo HTTP/9.9", 505, "HTTP Version"),
    ],
)
def test_a_request_line_the_server_cannot_parse_is_answered_in_the_json_error_shape(
    gateway, request_line, status, words
):
    got, body, after = exchange(gateway, request_line + b"\r\nHost: x\r\n\r\n")
    assert (got, set(body), body["error"]) == (status, {"error", "message"}, "InvalidMessage")
    assert words in body["message"] and after == b""
