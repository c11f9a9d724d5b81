"""The messaging checks of ``magnetar verify``, through the public SDK only: acknowledged
messages stay acknowledged, a nack redelivers, a delayed message waits for its time, a
message nacked past the dead letter policy lands on the dead letter topic, and Key_Shared
keeps each key in order on one consumer. Each returns what it saw or raises CheckFailed.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import magnetar as pulsar
from magnetar.cli.verify.context import (
    CheckFailed,
    CheckSkipped,
    Deadline,
    VerifyContext,
    await_backlog,
)

SUBSCRIPTION = "verify"
CLOCK_ALLOWANCE_MS = 250
"""How much earlier than its time a delayed message may come by this machine's clock before
the check calls it early: the service decides by its own clock, a deployment's may differ."""
Wall = Callable[[], float]


def receive(consumer: Any, deadline: Deadline, what: str, cap_ms: int | None = None) -> Any:
    """The next message of ``consumer`` within the deadline; CheckFailed naming ``what``."""
    wait_ms = deadline.ms(cap_ms)
    try:
        return consumer.receive(wait_ms)
    except pulsar.Timeout:
        raise CheckFailed(f"{what} did not arrive within {wait_ms} ms") from None


def produce_consume_ack(ctx: VerifyContext, deadline: Deadline) -> str:
    topic = ctx.topic("ack")
    payloads = [f"ack-{i}".encode() for i in range(3)]
    consumer = ctx.client.subscribe(topic, SUBSCRIPTION, initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
    producer = ctx.client.create_producer(topic)
    try:
        for payload in payloads:
            producer.send(payload)
        got = []
        for payload in payloads:
            msg = receive(consumer, deadline, f"message {payload.decode()}")
            consumer.acknowledge(msg)
            got.append(msg.data())
        if got != payloads:
            raise CheckFailed(f"sent {payloads}, received {got}")
        # the service took the acks (acks are sent in the background, as in Pulsar: one the
        # consumer had not sent yet when it closed could come back, which is at-least-once)
        await_backlog(ctx, deadline, topic, SUBSCRIPTION)
        consumer.close()
        again = ctx.client.subscribe(topic, SUBSCRIPTION)
        producer.send(b"after-ack")
        first = receive(again, deadline, "the message sent after the acknowledgements")
        again.acknowledge(first)
        again.close()
        if first.data() != b"after-ack":
            raise CheckFailed(f"after acknowledging, a new consumer of the subscription got "
                              f"{first.data()!r} again (redelivery count {first.redelivery_count()})")  # fmt: skip
    finally:
        producer.close()
        consumer.close()
    return ("3 sent, received in order and acknowledged (backlog 0); a new consumer of the "
            "subscription got the next message, not them again")  # fmt: skip


def nack_redelivery(ctx: VerifyContext, deadline: Deadline) -> str:
    topic = ctx.topic("nack")
    consumer = ctx.client.subscribe(topic, SUBSCRIPTION, consumer_type=pulsar.ConsumerType.Shared,
                                    initial_position=pulsar.InitialPosition.Earliest,
                                    negative_ack_redelivery_delay_ms=200)  # fmt: skip
    producer = ctx.client.create_producer(topic)
    try:
        producer.send(b"nack-me")
        first = receive(consumer, deadline, "the message")
        nacked = time.monotonic()
        consumer.negative_acknowledge(first)
        again = receive(consumer, deadline, "the nacked message's redelivery")
        came_ms = round((time.monotonic() - nacked) * 1000)
        consumer.acknowledge(again)
        if str(again.message_id()) != str(first.message_id()) or again.redelivery_count() != 1:
            raise CheckFailed(f"nacked {first.message_id()}, then got {again.message_id()} "
                              f"with redelivery count {again.redelivery_count()} (expected 1)")  # fmt: skip
    finally:
        producer.close()
        consumer.close()
    return f"nacked with a 200 ms delay; redelivered after {came_ms} ms with redelivery count 1"


def _tick_ms(ctx: VerifyContext) -> tuple[int, str]:
    """The namespace's delayed delivery tick and where it came from; CheckSkipped when its
    delayed delivery is off."""
    answer = ctx.service.call("GET", f"/admin/v2/namespaces/{ctx.namespace}/delayedDelivery")
    if answer.status != 200 or not isinstance(answer.body, dict):
        return 1000, f"Pulsar's default tick (the policy read answered {answer.status})"
    if answer.body.get("active") is False:
        raise CheckSkipped(f"delayed delivery is off in {ctx.namespace} (its delayedDelivery "
                           "policy): delayed messages are delivered at once")  # fmt: skip
    return int(answer.body.get("tickTime") or 1000), "the namespace's tick"


def delayed_delivery(ctx: VerifyContext, deadline: Deadline, wall: Wall = time.time) -> str:
    """A message due at a tick boundary ``delay_ms`` or so from now, then one without delay:
    both come, the delayed one not before its time (by this machine's clock, less
    ``CLOCK_ALLOWANCE_MS``). On a tick boundary "up to one tick early" (Pulsar's default,
    non-strict mode) is not early at all."""
    tick_ms, tick_source = _tick_ms(ctx)
    topic = ctx.topic("delayed")
    consumer = ctx.client.subscribe(topic, SUBSCRIPTION, consumer_type=pulsar.ConsumerType.Shared,
                                    initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
    producer = ctx.client.create_producer(topic)
    arrived_ms: dict[bytes, float] = {}
    try:
        sent_ms = wall() * 1000
        due_ms = math.ceil((sent_ms + ctx.delay_ms) / tick_ms) * tick_ms
        producer.send(b"delayed", deliver_at=due_ms)
        producer.send(b"at-once")
        # in either order: a consumer slower than the delay finds both due at once
        while len(arrived_ms) < 2:
            msg = receive(consumer, deadline, "the delayed message" if b"at-once" in arrived_ms else "the messages")  # fmt: skip
            arrived_ms.setdefault(msg.data(), wall() * 1000)
            consumer.acknowledge(msg)
    finally:
        producer.close()
        consumer.close()
    came_ms, other_ms = arrived_ms[b"delayed"], arrived_ms[b"at-once"]
    if came_ms < due_ms - CLOCK_ALLOWANCE_MS:
        raise CheckFailed(f"the delayed message came {due_ms - came_ms:.0f} ms before its time")
    return (f"due {due_ms - sent_ms:.0f} ms after sending ({tick_source}: {tick_ms} ms); came "
            f"{came_ms - sent_ms:.0f} ms after sending, {came_ms - due_ms:.0f} ms after its time "
            f"(the undelayed one after {other_ms - sent_ms:.0f} ms)")  # fmt: skip


def dead_letter(ctx: VerifyContext, deadline: Deadline) -> str:
    topic = ctx.topic("dlq")
    dlq = f"{topic}-{SUBSCRIPTION}-DLQ"
    policy = pulsar.ConsumerDeadLetterPolicy(1, initial_subscription_name=SUBSCRIPTION)
    consumer = ctx.client.subscribe(topic, SUBSCRIPTION, consumer_type=pulsar.ConsumerType.Shared,
                                    initial_position=pulsar.InitialPosition.Earliest,
                                    dead_letter_policy=policy,
                                    negative_ack_redelivery_delay_ms=0)  # fmt: skip
    dead = ctx.client.subscribe(dlq, SUBSCRIPTION, consumer_type=pulsar.ConsumerType.Shared,
                                initial_position=pulsar.InitialPosition.Earliest)  # fmt: skip
    producer = ctx.client.create_producer(topic)
    try:
        sent = producer.send(b"poison", properties={"verify": ctx.run_id})
        for attempt in (0, 1):
            msg = receive(consumer, deadline, f"delivery {attempt + 1} of the message")
            if msg.redelivery_count() != attempt:
                raise CheckFailed(f"delivery {attempt + 1} had redelivery count {msg.redelivery_count()}")  # fmt: skip
            consumer.negative_acknowledge(msg)
        landed = receive(dead, deadline, f"the message on the dead letter topic {dlq}")
        dead.acknowledge(landed)
    finally:
        producer.close()
        consumer.close()
        dead.close()
    properties = landed.properties()
    if landed.data() != b"poison" or properties.get("REAL_TOPIC") != topic:
        raise CheckFailed(f"the dead letter topic got {landed.data()!r} with properties {properties}")  # fmt: skip
    return (f"delivered twice, nacked twice (max_redeliver_count 1); landed on {dlq.rsplit('/', 1)[-1]} "
            f"with REAL_TOPIC and ORIGIN_MESSAGE_ID {properties.get('ORIGIN_MESSAGE_ID', sent)}")  # fmt: skip


KEYS = 4
PER_KEY = 5
CONSUMERS = 3


def key_shared_order(ctx: VerifyContext, deadline: Deadline) -> str:
    topic = ctx.topic("keyshared")
    consumers = [ctx.client.subscribe(topic, SUBSCRIPTION, consumer_type=pulsar.ConsumerType.KeyShared,
                                      initial_position=pulsar.InitialPosition.Earliest,
                                      consumer_name=f"verify-{i}")
                 for i in range(CONSUMERS)]  # fmt: skip
    producer = ctx.client.create_producer(topic, batching_enabled=True, batching_max_messages=KEYS * PER_KEY)  # fmt: skip
    expected = {f"key-{k}": [f"key-{k}:{n}".encode() for n in range(PER_KEY)] for k in range(KEYS)}
    got: dict[str, list[tuple[int, bytes]]] = {}
    lock = threading.Lock()
    total = KEYS * PER_KEY

    def drain(index: int) -> None:
        while not deadline.expired:
            with lock:
                if sum(len(v) for v in got.values()) >= total:
                    return
            try:
                msg = consumers[index].receive(min(200, max(1, deadline.ms())))
            except (pulsar.Timeout, CheckFailed):
                continue
            consumers[index].acknowledge(msg)
            with lock:
                got.setdefault(msg.partition_key(), []).append((index, msg.data()))

    results: list[Any] = []
    try:
        for n in range(PER_KEY):
            for key in expected:
                producer.send_async(f"{key}:{n}".encode(), lambda res, _id: results.append(res),
                                    partition_key=key)  # fmt: skip
        producer.flush()
        failed = [r for r in results if r != pulsar.Result.Ok]
        if failed:
            raise CheckFailed(f"{len(failed)} of {total} sends failed: {failed[0]}")
        threads = [threading.Thread(target=drain, args=(i,), daemon=True) for i in range(CONSUMERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(deadline.remaining_s() + 1)
    finally:
        producer.close()
        for consumer in consumers:
            consumer.close()
    with lock:
        received = {key: list(v) for key, v in got.items()}
    count = sum(len(v) for v in received.values())
    if count != total:
        raise CheckFailed(f"{count} of {total} messages came within the check's time")
    for key, rows in received.items():
        owners = {index for index, _ in rows}
        if len(owners) != 1:
            raise CheckFailed(f"{key} went to consumers {sorted(owners)}, not one")
        if [data for _, data in rows] != expected.get(key):
            raise CheckFailed(f"{key} came as {[d.decode() for _, d in rows]}, not in order")
    used = len({index for rows in received.values() for index, _ in rows})
    return (f"{total} messages of {KEYS} keys, batched, to {CONSUMERS} consumers: each key whole on one "
            f"consumer and in order ({used} consumers got keys)")  # fmt: skip
