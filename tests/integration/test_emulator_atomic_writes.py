"""The embedded emulator applies conditional writes atomically, as DynamoDB and S3 do: the
commit protocol's guarantee (one winner per entry id) must hold on the local stack too."""

from __future__ import annotations

import threading
import uuid

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.emulator

THREADS = 8
KEYS = 40


def _race(put) -> dict[int, int]:
    """Run ``put(key_index, writer)`` from THREADS threads over KEYS keys, all starting
    together; returns how many writers won each key."""
    wins = {k: 0 for k in range(KEYS)}
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def writer(w: int) -> None:
        start.wait()
        for k in range(KEYS):
            if put(k, w):
                with lock:
                    wins[k] += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wins


def test_concurrent_conditional_puts_of_one_item_have_exactly_one_winner(local_stack, aws_clients):
    table = local_stack.environment["LOG_TABLE"]
    pk = f"atomic-{uuid.uuid4().hex[:10]}|1"

    def put(k: int, w: int) -> bool:
        try:
            aws_clients.dynamodb.put_item(
                TableName=table,
                Item={"pk": {"S": pk}, "eid": {"N": str(k)}, "w": {"N": str(w)}},
                ConditionExpression="attribute_not_exists(pk)",
            )
            return True
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == "ConditionalCheckFailedException"
            return False

    assert _race(put) == {k: 1 for k in range(KEYS)}


def test_concurrent_if_none_match_puts_of_one_object_have_exactly_one_winner(
    local_stack, aws_clients
):
    bucket = local_stack.environment["ENTRIES_BUCKET"]
    prefix = f"atomic/{uuid.uuid4().hex[:10]}"

    def put(k: int, w: int) -> bool:
        try:
            aws_clients.s3.put_object(
                Bucket=bucket, Key=f"{prefix}/{k}", Body=str(w).encode(), IfNoneMatch="*"
            )
            return True
        except ClientError as exc:
            assert exc.response["Error"]["Code"] in (
                "PreconditionFailed",
                "ConditionalRequestConflict",
            )
            return False

    assert _race(put) == {k: 1 for k in range(KEYS)}
