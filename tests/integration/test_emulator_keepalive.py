"""The embedded emulator keeps its clients' connections open between requests
(``magnetar_local.moto_keepalive``): a boto3 client's calls share one connection, as they
would with AWS, instead of one new connection and one server thread per call."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.emulator


def test_the_emulator_answers_several_requests_on_one_connection(local_stack) -> None:
    url = urlsplit(local_stack.aws_endpoint_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    headers = {
        "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/dynamodb/"
        "aws4_request, SignedHeaders=host, Signature=0",
    }
    sockets = set()
    for _ in range(3):
        conn.request("POST", "/", body=b"{}", headers=headers)
        response = conn.getresponse()
        assert response.status == 200 and "TableNames" in json.loads(response.read())
        assert response.getheader("Connection") != "close"
        sockets.add(id(conn.sock))
    assert len(sockets) == 1 and conn.sock is not None
    conn.close()
