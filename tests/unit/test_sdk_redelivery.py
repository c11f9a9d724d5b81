"""Negative acks sent to the service with their delay or backoff, and the ack timeout tracked
per tick as Pulsar's client does (fake clock, the engine on in-memory adapters)."""

from __future__ import annotations

import logging
import time

import pytest

import magnetar as pulsar
from magnetar._consumer.acks import tracker as _acks
from magnetar._consumer.acks.tracker import AckTracker, Redelivery


class FakeClock:
    """A monotonic clock that only moves when told."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def produce(client, topic, payloads):
    producer = client.create_producer(topic)
    for p in payloads:
        producer.send(p)
    producer.close()


def mid(entry: int) -> pulsar.MessageId:
    return pulsar.MessageId(-1, 1, entry, -1)


def tracker(clock, **settings):
    sent: list[tuple[str, str, dict]] = []
    t = AckTracker(lambda sub, action, body: sent.append((sub, action, body)),
                   Redelivery(**settings), logging.getLogger("test"), clock=clock, start=False)  # fmt: skip
    return t, sent


# ------------------------------------------------------------------ backoff object


def test_the_multiplier_backoff_follows_pulsar_s_table():
    backoff = pulsar.MultiplierRedeliveryBackoff(1000, 60_000, 2)
    assert [backoff.next(count) for count in range(8)] == [
        1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000,
    ]  # fmt: skip
    assert (backoff.min_delay_ms, backoff.max_delay_ms, backoff.multiplier) == (1000, 60000, 2.0)


@pytest.mark.parametrize("args, error", [
    ((-1, 10, 2), "min_delay_ms"),
    ((100, 10, 2), "min_delay_ms"),
    ((100, 1000, 0.5), "multiplier"),
    (("1", 1000, 2), "min_delay_ms"),
    ((100, 1000, True), "multiplier"),
])  # fmt: skip
def test_a_backoff_with_bad_values_raises_value_error(args, error):
    with pytest.raises(ValueError, match=error):
        pulsar.MultiplierRedeliveryBackoff(*args)


def test_subscribe_checks_the_redelivery_arguments(client):
    with pytest.raises(ValueError, match="negative_ack_redelivery_backoff"):
        client.subscribe("t", "s", negative_ack_redelivery_backoff={"minDelayMs": 1})
    with pytest.raises(ValueError, match="ack_timeout_redelivery_backoff"):
        client.subscribe("t", "s", ack_timeout_redelivery_backoff=1000)
    with pytest.raises(ValueError, match="tick_duration_ms must be >= 100"):
        client.subscribe("t", "s", unacked_messages_timeout_ms=10_000, tick_duration_ms=99)
    with pytest.raises(ValueError, match="10000"):
        client.subscribe("t", "s", unacked_messages_timeout_ms=9999)


# ------------------------------------------------------------------ negative acks


def test_a_nack_backoff_goes_to_the_service_which_delays_each_redelivery_by_its_count(svc, client):
    backoff = pulsar.MultiplierRedeliveryBackoff(200, 400, 2)
    consumer = client.subscribe("t", "s", negative_ack_redelivery_backoff=backoff,
                                negative_ack_redelivery_delay_ms=5)  # fmt: skip
    produce(client, "t", [b"x"])
    msg = consumer.receive(5000)
    gaps, counts = [], [msg.redelivery_count()]
    for _ in range(3):
        nacked = time.monotonic()
        consumer.negative_acknowledge(msg)
        msg = consumer.receive(5000)
        gaps.append(time.monotonic() - nacked)
        counts.append(msg.redelivery_count())
    bodies = [n.body for n in svc.recorded("nack")]
    assert bodies == [{"messageIds": ["1:0:-1:-1"], "redeliveryCounts": {"1:0:-1:-1": count},
                       "backoff": {"minDelayMs": 200, "maxDelayMs": 400, "multiplier": 2.0}}
                      for count in range(3)]  # fmt: skip
    assert counts == [0, 1, 2, 3]
    assert [g >= d for g, d in zip(gaps, [0.2, 0.4, 0.4], strict=True)] == [True] * 3


def test_many_nacks_travel_in_one_request_per_sub_consumer(svc, client, monkeypatch):
    monkeypatch.setattr(_acks, "ACK_GROUP_TIME", 3.0)  # the 50 nacks within one group's time
    consumer = client.subscribe("t", "s", negative_ack_redelivery_delay_ms=0)
    produce(client, "t", [b"%d" % i for i in range(50)])
    messages = [consumer.receive(5000) for _ in range(50)]
    for msg in messages:
        consumer.negative_acknowledge(msg)
    assert svc.wait_for(lambda s: s.recorded("nack"), timeout=10.0)
    nacks = svc.recorded("nack")
    assert [n.body for n in nacks] == [
        {
            "messageIds": [f"1:{i}:-1:-1" for i in range(50)],
            "delayMs": 0,
            "redeliveryCounts": {f"1:{i}:-1:-1": 0 for i in range(50)},
        }
    ]


def test_a_pending_nack_goes_out_on_close_and_acks_travel_before_nacks():
    clock = FakeClock()
    t, sent = tracker(clock, nack_delay_ms=2000)
    t.nack("sub", mid(0))
    t.ack("sub", mid(1))
    assert t.run_due() == 0  # the group's 100 ms have not passed
    t.flush()
    assert sent == [("sub", "ack", {"messageIds": ["1:1:-1:-1"], "cumulative": False}),
                    ("sub", "nack", {"messageIds": ["1:0:-1:-1"], "delayMs": 2000})]  # fmt: skip


def test_redeliver_unacknowledged_drops_pending_nacks():
    t, sent = tracker(FakeClock(), nack_delay_ms=2000)
    t.nack("sub", mid(0))
    t.clear_unacked()
    t.flush()
    assert sent == []


# ------------------------------------------------------------------ ack timeout


def test_unacked_messages_go_back_at_the_first_tick_at_or_after_their_timeout():
    clock = FakeClock(1000.0)
    t, sent = tracker(clock, ack_timeout_ms=10_000, tick_ms=1000)
    t.delivered("a", mid(0))
    clock.now = 1000.5
    t.delivered("a", mid(1))
    t.delivered("b", mid(2))
    clock.now = 1009.99
    assert t.run_due() == 0
    clock.now = 1010.0
    assert t.run_due() == 1
    clock.now = 1010.9  # mid(1) timed out at 1010.5: it waits for the tick at 1011
    assert t.run_due() == 0
    clock.now = 1011.0
    assert t.run_due() == 2
    assert sent == [("a", "nack", {"messageIds": ["1:0:-1:-1"]}),
                    ("a", "nack", {"messageIds": ["1:1:-1:-1"]}),
                    ("b", "nack", {"messageIds": ["1:2:-1:-1"]})]  # fmt: skip


def test_acked_and_nacked_messages_leave_the_ack_timeout():
    clock = FakeClock()
    t, sent = tracker(clock, ack_timeout_ms=10_000, nack_delay_ms=0)
    for entry in range(3):
        t.delivered("a", mid(entry))
    t.ack("a", mid(0))
    t.nack("a", mid(1))
    clock.now += 20
    assert t.run_due() == 3
    assert sent == [("a", "ack", {"messageIds": ["1:0:-1:-1"], "cumulative": False}),
                    ("a", "nack", {"messageIds": ["1:1:-1:-1"], "delayMs": 0}),
                    ("a", "nack", {"messageIds": ["1:2:-1:-1"]})]  # fmt: skip


def test_the_ack_timeout_backoff_is_sent_with_the_timed_out_ids():
    clock = FakeClock()
    backoff = pulsar.MultiplierRedeliveryBackoff(1000, 8000, 3)
    t, sent = tracker(clock, ack_timeout_ms=10_000, ack_timeout_backoff=backoff)
    t.delivered("a", mid(0))
    clock.now += 10
    t.run_due()
    assert sent == [("a", "nack", {"messageIds": ["1:0:-1:-1"],
                     "backoff": {"minDelayMs": 1000, "maxDelayMs": 8000, "multiplier": 3.0}})]  # fmt: skip


def test_a_tick_longer_than_the_timeout_is_cut_to_the_timeout():
    clock = FakeClock(1000.0)
    t, sent = tracker(clock, ack_timeout_ms=10_000, tick_ms=60_000)
    t.delivered("a", mid(0))
    clock.now = 1010.0
    assert t.run_due() == 1


def test_a_consumer_s_unacked_message_comes_back_with_count_plus_one(svc, client, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(_acks, "monotonic", clock)
    consumer = client.subscribe("t", "s", unacked_messages_timeout_ms=10_000)
    produce(client, "t", [b"x"])
    first = consumer.receive(5000)
    clock.now += 10
    consumer._core.acks.wake()
    again = consumer.receive(5000)
    assert [n.body for n in svc.recorded("nack")] == [
        {"messageIds": ["1:0:-1:-1"], "redeliveryCounts": {"1:0:-1:-1": 0}}
    ]
    assert (first.redelivery_count(), again.data(), again.redelivery_count()) == (0, b"x", 1)
    consumer.acknowledge(again)
    clock.now += 20
    consumer._core.acks.wake()
    assert svc.wait_for(lambda s: s.recorded("ack"))
    consumer.close()
    assert len(svc.recorded("nack")) == 1
