"""The expire job's e2e tests' tools: one expiry pass over a namespace of the embedded stack
(``run_expire``, ``expire.main`` against the emulator), what the log index, the bucket and a
cursor hold, and the topic's stats once they settle."""

from __future__ import annotations

import time

import expire
import requests


def run_expire(local_stack, namespace: str, *extra: str, endpoint_url: str | None = None):
    """One expiry pass over ``namespace`` on the stack's tables and bucket."""
    env = local_stack.environment
    argv = ["--bucket", env["ENTRIES_BUCKET"], "--topics-table", env["TOPICS_TABLE"]]
    argv += ["--log-table", env["LOG_TABLE"], "--cursors-table", env["CURSORS_TABLE"]]
    argv += ["--endpoint-url", endpoint_url or local_stack.aws_endpoint_url]
    argv += ["--namespace", namespace]
    return expire.main([*argv, *extra])


def index_ids(aws_clients, local_stack, log_key: str) -> list[int]:
    items = aws_clients.dynamodb.query(
        TableName=local_stack.environment["LOG_TABLE"],
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": log_key}},
        ConsistentRead=True,
    )["Items"]
    return [int(i["eid"]["N"]) for i in items]


def objects_under(aws_clients, local_stack, prefix: str) -> set[str]:
    listing = aws_clients.s3.list_objects_v2(
        Bucket=local_stack.environment["ENTRIES_BUCKET"], Prefix=prefix
    )
    return {o["Key"] for o in listing.get("Contents", [])}


def cursor_item(aws_clients, local_stack, log_key: str, sub: str) -> dict | None:
    return aws_clients.dynamodb.get_item(
        TableName=local_stack.environment["CURSORS_TABLE"],
        Key={"pk": {"S": log_key}, "sub": {"S": sub}},
        ConsistentRead=True,
    ).get("Item")


def log_key_of(topic: str, msg_id) -> str:
    return f"{topic}|{msg_id.ledger_id()}"


def stats_when(local_stack, topic: str, settled, timeout_s: float = 10.0) -> dict:
    """The topic's stats through the HTTP admin route, once ``settled(stats)`` holds (the
    SDK sends acks grouped within 100 ms); the last answer when the deadline passes."""
    url = f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats"
    deadline = time.monotonic() + timeout_s
    while True:
        answer = requests.get(url, timeout=30)
        assert answer.status_code == 200, answer.text
        stats = answer.json()
        if settled(stats) or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)  # as _await_backlog: another process's state, known by asking


def await_backlog(local_stack, topic: str, subscription: str, wanted: int) -> None:
    """Wait (at most 30 s) until the subscription's backlog, as the admin stats count it, is
    ``wanted``: the acknowledgements the consumer sent have reached its cursor."""
    url = f"{local_stack.url}/admin/v2/{topic.replace('://', '/')}/stats"
    deadline = time.monotonic() + 30
    backlog = None
    while time.monotonic() < deadline:
        backlog = requests.get(url, timeout=10).json()["subscriptions"][subscription]["msgBacklog"]
        if backlog == wanted:
            return
        time.sleep(0.05)  # another process's state: nothing to wait on but its answers
    raise AssertionError(f"backlog of {subscription} stayed {backlog}, not {wanted}")
