"""A producer resends what the service says it did not store (contention, throttling), and
what it may or may not have stored (a gateway timeout, a 5xx) with the same sequence ids."""

from __future__ import annotations

import time

import pytest

import magnetar as pulsar
from magnetar_local.events import json_response


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


def test_a_send_waits_the_retry_after_the_service_asked_for_before_resending(svc, client):
    producer = client.create_producer("persistent://public/default/t", batching_enabled=False)
    svc.fail_next("produce", 503, "ServiceUnitNotReady", "overloaded", retry_after_ms=400)
    started = time.monotonic()

    msg_id = producer.send(b"x")

    assert time.monotonic() - started >= 0.4
    assert len(svc.recorded("produce")) == 2 and msg_id.entry_id() == 0
    producer.close()


def test_a_retry_after_beyond_the_send_timeout_ends_in_timeout_without_resending_early(svc, client):
    producer = client.create_producer(
        "persistent://public/default/t", batching_enabled=False, send_timeout_millis=300
    )
    svc.fail_next("produce", 503, "ServiceUnitNotReady", "overloaded", retry_after_ms=5000)
    started = time.monotonic()

    with pytest.raises(pulsar.Timeout):
        producer.send(b"x")
    assert time.monotonic() - started < 3  # the send timeout, not the 5 s asked for
    assert len(svc.recorded("produce")) == 1
    producer.close()


def test_an_error_other_than_not_stored_is_not_retried(svc, client):
    producer = client.create_producer("persistent://public/default/t", batching_enabled=False)
    svc.fail_next("produce", 413, "MessageTooBig", "too big")

    with pytest.raises(pulsar.MessageTooBig):
        producer.send(b"x")
    assert len(svc.recorded("produce")) == 1
    producer.close()


def test_a_send_whose_lambda_timed_out_after_storing_is_resent_and_stored_once_with_dedup(
    svc, client
):
    """The answer of the first commit is lost after the entry was stored (API Gateway
    answers 504): the resend carries the same sequence id and deduplication drops it."""
    svc.engine.namespaces.set_deduplication("public", "default", True)
    producer = client.create_producer("persistent://public/default/t", batching_enabled=False,
                                      producer_name="p")  # fmt: skip
    handle, lost = svc.handle, []

    def store_then_lose(request, invoke):
        response = handle(request, invoke)
        if request.raw_path.endswith("/messages") and not lost:
            lost.append(response.status)
            return json_response(504, {"message": "Endpoint request timed out"})
        return response

    svc.handle = store_then_lose
    producer.send(b"x")
    reader = client.create_reader("persistent://public/default/t", pulsar.MessageId.earliest)
    stored = [reader.read_next(2000).data()]
    assert (lost, stored, reader.has_message_available()) == ([200], [b"x"], False)
    producer.close()
