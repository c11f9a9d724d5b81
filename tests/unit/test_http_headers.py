"""HTTP header blocks parsed without the ``email`` package (``magnetar_local.http_headers``,
installed in the emulator's moto process and in the process that hosts the handlers or a
local gateway) make exactly the message the standard library's
``http.client.parse_headers`` makes, and raise its errors."""

from __future__ import annotations

import http.client
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from magnetar_local.gateway import Gateway
from magnetar_local.handler_process import HandlerProcess
from magnetar_local.http_headers import _ORIGINAL, _plain_fields, parse_headers
from magnetar_local.template import LocalTemplate

TRICKY = " \t:\r\n\x7f\xe9\x00;=,\"'/"
names = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E) | st.sampled_from(TRICKY), max_size=12
)
values = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF) | st.sampled_from(TRICKY), max_size=20
)
content_types = st.sampled_from(
    ["application/json", "multipart/form-data; boundary=x", "message/rfc822", "text/plain"]
)
ends = st.sampled_from([b"\r\n", b"\n"])


@st.composite
def blocks(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        name = draw(names | st.sampled_from(["Content-Type", "Host", "From x", " folded"]))
        value = draw(content_types if name == "Content-Type" else values)
        separator = draw(st.sampled_from([": ", ":", ":\t ", " : ", ""]))
        lines.append(f"{name}{separator}{value}".encode("iso-8859-1") + draw(ends))
    if draw(st.booleans()):
        lines.append(draw(ends))  # the blank line; without it the block is cut off
    return b"".join(lines)


def parsed(parse, block: bytes) -> dict:
    return state_of(parse(io.BytesIO(block + b"the body, not read")))


def state_of(message) -> dict:
    """A message's attributes, its defects by type and text, parts (a list) by their own."""
    state = dict(vars(message))
    state["defects"] = [(type(d), str(d)) for d in state["defects"]]
    if isinstance(state["_payload"], list):
        state["_payload"] = [state_of(part) for part in state["_payload"]]
    state["class"] = type(message)
    return state


@given(blocks())
@settings(max_examples=examples(500))
def test_any_header_block_makes_the_standard_librarys_message(block: bytes) -> None:
    assert parsed(parse_headers, block) == parsed(_ORIGINAL, block)


def test_a_botocore_request_block_is_parsed_directly_to_the_same_message() -> None:
    block = (
        b"Host: 127.0.0.1:4566\r\nAccept-Encoding: identity\r\n"
        b"X-Amz-Target: DynamoDB_20120810.GetItem\r\nContent-Type: application/x-amz-json-1.0\r\n"
        b"Authorization: AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/dynamodb/aws4_request,"
        b" SignedHeaders=host, Signature=0\r\nContent-Length:  52 \r\n\r\n"
    )
    lines = io.BytesIO(block).readlines()
    assert _plain_fields(lines) is not None  # the direct path, not email's
    assert parsed(parse_headers, block) == parsed(_ORIGINAL, block)
    assert parse_headers(io.BytesIO(block))["content-length"] == "52 "


def test_too_long_a_line_and_too_many_headers_raise_the_standard_librarys_errors() -> None:
    with pytest.raises(http.client.LineTooLong):
        parse_headers(io.BytesIO(b"X: " + b"a" * 70_000 + b"\r\n\r\n"))
    with pytest.raises(http.client.HTTPException, match="got more than 100 headers"):
        parse_headers(io.BytesIO(b"X: y\r\n" * 101 + b"\r\n"))


def test_the_handlers_process_reads_headers_directly_and_keeps_doing_so_after_restore(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http.client, "parse_headers", _ORIGINAL)
    process = HandlerProcess()
    try:
        process.enter(LocalTemplate(), {})
        assert http.client.parse_headers is parse_headers
    finally:
        process.restore()
    assert http.client.parse_headers is parse_headers  # the same messages: nothing to undo


def test_a_started_gateway_reads_its_requests_headers_directly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http.client, "parse_headers", _ORIGINAL)
    gateway = Gateway([], {}).start()
    try:
        assert http.client.parse_headers is parse_headers
        connection = http.client.HTTPConnection(gateway.host, gateway.port, timeout=5)
        connection.request("GET", "/nothing", headers={"X-Folded": "a"})
        answer = connection.getresponse()
        assert (answer.status, answer.getheader("Content-Type")) == (404, "application/json")
        connection.close()
    finally:
        gateway.stop()
