"""The AWS request counter: totals for the process, and a per-thread count for measuring
one call's cost while other threads make requests too."""

from __future__ import annotations

import threading

from magnetar_core.adapters.aws.clients import RequestCounter


def test_a_thread_count_holds_only_the_requests_that_thread_made_within_the_block():
    counter = RequestCounter()
    counter.record("dynamodb.GetItem")  # before the block
    with counter.on_this_thread() as mine:
        counter.record("s3.PutObject")
        other = threading.Thread(target=counter.record, args=("dynamodb.Query",))
        other.start()
        other.join()
        with counter.on_this_thread() as inner:
            counter.record("dynamodb.TransactWriteItems")
    counter.record("s3.GetObject")  # after it

    assert mine == {"s3.PutObject": 1, "dynamodb.TransactWriteItems": 1}
    assert inner == {"dynamodb.TransactWriteItems": 1}
    assert sum(counter.snapshot().values()) == 5
