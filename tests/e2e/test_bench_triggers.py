"""``magnetar perf triggers`` on the session's embedded stack, with 20 messages: the harness
sees each message once and splits the requests between the delivery (the driver's threads:
entry reads, cursor writes) and the produce (entry commits). A measurement's wiring, not its
figures (docs/benchmarks.md)."""

from __future__ import annotations

from magnetar_bench.triggers import TriggerOptions, run_batch_size


def test_the_trigger_benchmark_sees_each_message_once_and_splits_delivery_from_produce(
    local_stack, client
):
    report = run_batch_size(local_stack, client, 10, TriggerOptions(messages=20, timeout_s=30))
    assert report["messages"] == 20 and report["duplicates"] == 0
    assert report["target_invocations"] >= 2 and report["latency_ms"]["p50"] > 0
    delivery = report["delivery_aws_requests_per_1000_messages"]
    produce = report["produce_apart"]["aws_requests_per_1000_messages"]
    entries_per_1000 = report["entries_committed"] * 1000 / 20
    # the small entries are inline in the index: committed by PutItem, read from the Query
    assert produce["dynamodb.PutItem"] >= entries_per_1000 > 0
    assert not any(name.startswith("s3.") for name in (*delivery, *produce))
    assert delivery["dynamodb.PutItem"] > 0  # the cursor's acknowledgements
    assert report["sqs_lambda_esm_per_million"]["lambda_invocations"] == 100_000
    assert local_stack.triggers.run_topic.__self__ is local_stack.triggers  # unwrapped again
