"""Cost models of push delivery at list prices (us-east-1, ``shared/PRICES.md``): the SQS ->
Lambda event source mapping a user would pick instead, and the parts of Magnetar's trigger
bill that the embedded stack cannot count (the stream-driven fan-out Lambda, the target's
invocations). Pure arithmetic; the assumptions are the module's constants.

SQS -> Lambda (standard queue, the mapping in its default on-demand mode):

- The producer sends with ``SendMessageBatch`` (10 messages a request), as Magnetar's
  batched producer does; every SQS request is billed per started 64 KiB of its payload.
- The mapping's pollers receive at most ``min(batchSize, 10)`` messages a ``ReceiveMessage``
  (SQS's maximum is 10) and always receive full ones: the lower bound, reached only with a
  backlog; at low rates long polls return partial batches and cost more per message.
- After a successful invocation the mapping deletes its batch with ``DeleteMessageBatch``,
  10 receipt handles a request (no payload: one request each).
- One Lambda request per batch of ``batchSize`` messages (a batch above 10 needs a batching
  window of at least 1 s on SQS, which adds up to that much latency).
- ``sparse``: at a rate too low to fill batches (a message every few hundred ms), every
  request and invocation carries one message: 3 SQS requests and 1 Lambda request each.
- Idle: the mapping keeps 5 pollers long-polling an empty queue, each ``ReceiveMessage``
  waiting 20 s: 5 x 3 requests a minute, 648,000 requests per 30-day month per queue
  (``SQS_IDLE_RECEIVES_PER_MINUTE``), billed like any request.

Magnetar's fan-out on AWS (template.yaml ``TriggerFanoutFunction``): the log table's
stream, one record per committed entry, feeds the fan-out through a mapping with batches of
up to 100 records and no batching window: one fan-out invocation per stream batch, i.e. at
best one per 100 committed entries, at worst (a commit at a time) one per entry; how the
batches form is modelled from the local driver's wakes (``fanout_invocations``). Lambda's
reads of a DynamoDB stream are free. The fan-out runs the delivery steps and waits for the
target synchronously, so its billed duration is the steps' time (measured) plus the
target's run; the target is billed one request per batch it receives. The target's own
duration is the user's code and the same on both sides, so neither side includes it.
"""

from __future__ import annotations

import math

from magnetar_bench.costs import LAMBDA_ARM_PER_GB_S, LAMBDA_MEMORY_GB, LAMBDA_PER_REQUEST

SQS_PER_REQUEST = 0.40 / 1e6
"""Dollars per SQS standard request (each 64 KiB chunk of a payload is one request)."""
SQS_CHUNK_BYTES = 64 * 1024
SQS_MAX_BATCH = 10
SQS_IDLE_POLLERS = 5
SQS_IDLE_RECEIVES_PER_MINUTE = SQS_IDLE_POLLERS * 3  # 20 s long polls
STREAM_BATCH_RECORDS = 100
"""The fan-out mapping's ``BatchSize`` (template.yaml)."""
STREAM_POLLS_PER_SECOND = 4
"""Lambda's base rate of polling a DynamoDB stream shard (AWS Lambda developer guide)."""


def sqs_chunks(payload_bytes: int) -> int:
    """Billed requests of one SQS request carrying ``payload_bytes`` bytes (>= 1)."""
    return max(1, math.ceil(payload_bytes / SQS_CHUNK_BYTES))


def sqs_esm_per_million(
    batch_size: int, message_bytes: int, sparse: bool = False
) -> dict[str, float]:
    """Requests and dollars per million messages sent to a standard queue and delivered by
    a Lambda event source mapping in batches of ``batch_size`` (1..10,000) messages of
    ``message_bytes`` bytes each, under the module's assumptions. ``sparse``: a rate too
    low to fill any batch, so every send, receive, delete and invocation carries one
    message. Raises ValueError for a batch size or message size out of range."""
    if not 1 <= batch_size <= 10_000 or message_bytes < 0:
        raise ValueError(f"batch size 1..10000 and bytes >= 0, not {batch_size}, {message_bytes}")
    if sparse:
        batch_size = 1
    per_send = 1 if sparse else SQS_MAX_BATCH
    per_receive = min(batch_size, SQS_MAX_BATCH)
    million = 1e6
    send = million / per_send * sqs_chunks(per_send * message_bytes)
    receive = million / per_receive * sqs_chunks(per_receive * message_bytes)
    delete = million / batch_size * math.ceil(batch_size / SQS_MAX_BATCH)
    invocations = million / batch_size
    return {
        "sqs_send_requests": round(send),
        "sqs_receive_requests": round(receive),
        "sqs_delete_requests": round(delete),
        "lambda_invocations": round(invocations),
        "usd_sqs_send": round(send * SQS_PER_REQUEST, 4),
        "usd_sqs_receive_and_delete": round((receive + delete) * SQS_PER_REQUEST, 4),
        "usd_lambda_requests": round(invocations * LAMBDA_PER_REQUEST, 4),
        "usd_total": round(
            (send + receive + delete) * SQS_PER_REQUEST + invocations * LAMBDA_PER_REQUEST, 4
        ),  # fmt: skip
    }


def sqs_esm_idle_usd_per_month(days: float = 30.0) -> float:
    """What one mapping's pollers cost on an empty queue in ``days`` days (dollars)."""
    return round(SQS_IDLE_RECEIVES_PER_MINUTE * 60 * 24 * days * SQS_PER_REQUEST, 4)


def fanout_invocations(entries: int, wakes: int, seconds: float) -> int:
    """Fan-out invocations for ``entries`` committed entries over ``seconds`` of delivery,
    which the local driver ran in ``wakes`` wakes. A stream shard has one invocation in
    flight and is polled ``STREAM_POLLS_PER_SECOND`` times a second; commits that arrive
    while a run is under way wait for the next batch, as they wait for the driver's next
    wake. So: the driver's wakes, no more than the polls in ``seconds``, no fewer than one
    per ``STREAM_BATCH_RECORDS`` entries, and never more than the entries."""
    polls = math.ceil(STREAM_POLLS_PER_SECOND * seconds)
    fewest = math.ceil(entries / STREAM_BATCH_RECORDS)
    return max(fewest, min(wakes, polls, entries))


def lambda_duration_usd(seconds: float, memory_gb: float = LAMBDA_MEMORY_GB) -> float:
    """Dollars of ``seconds`` of arm64 Lambda time at ``memory_gb`` GB."""
    return seconds * memory_gb * LAMBDA_ARM_PER_GB_S
