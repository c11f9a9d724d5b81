"""What the same messages would cost on AWS's own messaging services, the anchors ``perf
cost`` puts beside each row (us-east-1 list prices, shared/PRICES.md)."""

from __future__ import annotations

SQS_USD_PER_MILLION = {
    "unbatched": 1.20,
    "pipelined": 1.20,
    "batched": 0.12,
    "batched-large": 0.12,
    "delayed": 1.20,
    "delayed-pipelined": 1.20,
}
"""SQS standard for send + receive + delete ($0.40 per million requests; batches of 10)."""
SQS_IDLE_USD_PER_MONTH = 0.05
"""An SQS long-poller (20 s polls) with nothing to receive: ~130k requests a month."""
SNS_PUBLISH_PER_MILLION = 0.50
"""SNS standard topic, per million publishes (a PublishBatch of 10 is one request)."""
SQS_PER_MILLION_REQUESTS = 0.40


def sns_sqs_usd_per_million(subscriptions: int, batch: int = 1) -> float:
    """SNS + SQS fan-out per million messages: one publish per ``batch`` messages, then per
    subscription's queue one receive and one delete per ``batch`` (SNS's deliveries to SQS
    are not charged by SNS; the queue's enqueue is taken as free too, so this is SNS +
    SQS's lower bound: add $0.40 per subscription if the enqueue is billed)."""
    per_request = 1 / max(1, min(batch, 10))
    return round(
        per_request * (SNS_PUBLISH_PER_MILLION + 2 * SQS_PER_MILLION_REQUESTS * subscriptions), 4
    )


SNS_SQS_USD_PER_MILLION = {name: sns_sqs_usd_per_million(1, 10 if name.startswith("batched") else 1)
                           for name in SQS_USD_PER_MILLION}  # fmt: skip
"""SNS + SQS for the workloads' one subscription."""
