"""Names at the edge's length limits work on the emulator's DynamoDB and S3 (which enforce
the key-size limits), and longer ones are a 400, not a 500 (issue 11, defect 7)."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from magnetar_core.api import limits

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from edge_http import assert_error, call  # noqa: E402

pytestmark = pytest.mark.emulator
PRODUCE = json.dumps({"messages": [{"payload": "YWJj", "key": "k"}]}).encode()


def test_a_partitioned_topic_with_every_name_at_its_limit_is_produced_and_consumed(local_stack):
    unique = uuid.uuid4().hex
    tenant = unique + "t" * (limits.MAX_TENANT_BYTES - 32)
    namespace = unique + "n" * (limits.MAX_NAMESPACE_BYTES - 32)
    topic = unique + "x" * (limits.MAX_TOPIC_BYTES - 32)
    subscription = "s" * limits.MAX_SUBSCRIPTION_BYTES
    local_stack.create_namespaces(f"{tenant}/{namespace}")
    base = f"{local_stack.url}/admin/v2/persistent/{tenant}/{namespace}/{topic}"
    assert call(base + "/partitions", "PUT", body=b"2")[0] == 204
    data = f"{local_stack.url}/v1/persistent/{tenant}/{namespace}/{topic}"
    status, handle, _ = call(
        f"{data}-partition-1/subscriptions/{subscription}/consumers",
        body=b'{"initialPosition": "Earliest", "subscriptionType": "Shared"}',
    )
    assert status == 200, handle
    status, produced, _ = call(f"{data}-partition-1/messages", body=PRODUCE)
    assert status == 200, produced
    consumer = f"{data}-partition-1/subscriptions/{subscription}/consumers/{handle['consumerId']}"
    status, received, _ = call(consumer + "/receive", body=b'{"waitMs": 2000}')
    assert status == 200 and [m["payload"] for m in received["messages"]] == ["YWJj"], received
    status, acked, _ = call(consumer + "/ack", body=json.dumps(
        {"messageIds": [received["messages"][0]["messageId"]]}).encode())  # fmt: skip
    assert (status, acked) == (200, {"acknowledged": 1})


@pytest.mark.parametrize(
    "path",
    [
        "/v1/persistent/public/default/" + "x" * 1100 + "/messages",
        "/v1/persistent/" + "t" * 3000 + "/default/x/messages",
        "/v1/persistent/public/default/t/subscriptions/" + "s" * 1100 + "/consumers",
    ],
)
def test_names_beyond_the_limits_are_a_400_on_the_emulator(local_stack, path):
    answer = call(local_stack.url + path, body=PRODUCE if path.endswith("messages") else b"{}")
    assert answer[0] == 400
    assert_error(answer, 400, answer[1]["error"], "bytes")
