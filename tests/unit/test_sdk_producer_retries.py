"""A producer resends what the service says it did not store (contention, throttling)."""

from __future__ import annotations

import pytest

import magnetar as pulsar


def test_a_send_answered_with_service_unit_not_ready_is_resent_and_succeeds(svc, client):
    producer = client.create_producer("persistent://public/default/t", batching_enabled=False)
    svc.fail_next("produce", 503, "ServiceUnitNotReady", "contention")
    svc.fail_next("produce", 429, "TooManyRequests", "slow down")

    msg_id = producer.send(b"x")

    assert len(svc.recorded("produce")) == 3
    assert msg_id.entry_id() == 0
    producer.close()


def test_a_send_still_refused_at_its_send_timeout_fails_with_timeout(svc, client):
    producer = client.create_producer(
        "persistent://public/default/t", batching_enabled=False, send_timeout_millis=300
    )
    for _ in range(200):
        svc.fail_next("produce", 503, "ServiceUnitNotReady", "contention")

    with pytest.raises(pulsar.Timeout):
        producer.send(b"x")
    producer.close()


def test_an_error_other_than_not_stored_is_not_retried(svc, client):
    producer = client.create_producer("persistent://public/default/t", batching_enabled=False)
    svc.fail_next("produce", 413, "MessageTooBig", "too big")

    with pytest.raises(pulsar.MessageTooBig):
        producer.send(b"x")
    assert len(svc.recorded("produce")) == 1
    producer.close()
