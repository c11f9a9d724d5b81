"""Backlog quotas and rates as values (Pulsar's bodies and rules), the token-bucket limiters
on a fake clock, and the backlog quota check (issue 14)."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import InvalidMessage, PreconditionFailed
from magnetar_core.domain.quotas import (
    BacklogQuota,
    DispatchRate,
    PublishRate,
    QuotaPolicies,
    SubscribeRate,
    backlog_quota_type,
    check_within_retention,
)
from magnetar_core.domain.retention import RetentionPolicies
from magnetar_core.domain.throttle import Backlog, Limiter, TokenBucket, backlog_exceeded


def test_a_backlog_quota_body_round_trips_and_takes_the_deprecated_limit_name():
    body = {"limitSize": 1024, "limitTime": 60, "policy": "producer_exception"}
    assert BacklogQuota.from_body(body).to_body() == body
    legacy = BacklogQuota.from_body({"limit": 10, "policy": "consumer_backlog_eviction"})
    assert (legacy.limit_size_bytes, legacy.limit_time_s) == (10, -1)


@pytest.mark.parametrize(
    "body",
    [
        {"limitSize": 1},  # no policy
        {"limitSize": 1, "policy": "drop_everything"},
        {"limitSize": -2, "policy": "producer_request_hold"},
        {"limitSize": "1", "policy": "producer_request_hold"},
        {"limitSize": 1, "policy": "producer_request_hold", "extra": 1},
        [1],
        None,
    ],
)
def test_a_bad_backlog_quota_body_is_invalid(body):
    with pytest.raises(InvalidMessage):
        BacklogQuota.from_body(body)


def test_rates_take_pulsars_bodies_with_pulsars_defaults():
    assert PublishRate.from_body({}).to_body() == {
        "publishThrottlingRateInMsg": -1,
        "publishThrottlingRateInByte": -1,
    }
    assert DispatchRate.from_body({"dispatchThrottlingRateInMsg": 5}).to_body() == {
        "dispatchThrottlingRateInMsg": 5,
        "dispatchThrottlingRateInByte": -1,
        "ratePeriodInSecond": 1,
        "relativeToPublishRate": False,
    }
    assert SubscribeRate.from_body({}).to_body() == {
        "subscribeThrottlingRatePerConsumer": -1,
        "ratePeriodInSecond": 30,
    }
    with pytest.raises(InvalidMessage, match="ratePeriodInSecond"):
        DispatchRate.from_body({"ratePeriodInSecond": 0})
    with pytest.raises(InvalidMessage, match="relativeToPublishRate"):
        DispatchRate.from_body({"relativeToPublishRate": "yes"})


def test_the_quota_type_defaults_to_destination_storage_and_must_be_known():
    assert backlog_quota_type(None) == "destination_storage"
    assert backlog_quota_type("message_age") == "message_age"
    with pytest.raises(InvalidMessage, match="backlogQuotaType"):
        backlog_quota_type("size")


def test_quota_policies_round_trip_their_stored_json_and_a_topic_falls_back_to_its_namespace():
    ns = QuotaPolicies(publish_rate=PublishRate(10, -1)).with_backlog_quota(
        "destination_storage", BacklogQuota(100, -1, "producer_exception")
    )
    assert QuotaPolicies.from_json(ns.to_json()) == ns
    topic = QuotaPolicies(subscribe_rate=SubscribeRate(2, 10)).with_backlog_quota(
        "destination_storage", BacklogQuota(5, -1, "producer_request_hold")
    )
    applied = topic.over(ns)
    assert applied.publish_rate == PublishRate(10, -1)
    assert applied.subscribe_rate == SubscribeRate(2, 10)
    assert applied.backlog_quota("destination_storage") == BacklogQuota(
        5, -1, "producer_request_hold"
    )


def test_a_backlog_quota_reaching_the_retention_is_a_precondition_failure():
    retention = RetentionPolicies(retention_time_minutes=10, retention_size_mb=1)
    check_within_retention(BacklogQuota(1024 * 1024 - 1, 599), retention, "namespace")
    with pytest.raises(
        PreconditionFailed, match="exceeds configured retention quota for namespace"
    ):
        check_within_retention(BacklogQuota(1024 * 1024, -1), retention, "namespace")
    with pytest.raises(PreconditionFailed, match="for topic"):
        check_within_retention(BacklogQuota(-1, 600), retention, "topic")
    check_within_retention(BacklogQuota(2**40, -1), RetentionPolicies(-1, -1), "namespace")


def test_a_token_bucket_admits_while_it_holds_a_permit_then_waits_out_its_debt():
    bucket = TokenBucket(permits=10, period_ms=1000, now_ms=0)
    bucket.take(25, now_ms=0)  # a batch larger than the bucket goes, into debt
    assert bucket.tokens(0) == -15
    assert bucket.wait_ms(0) == pytest.approx(1500, abs=1)
    assert bucket.wait_ms(1500) == pytest.approx(0, abs=1e-3)
    assert bucket.wait_ms(1501) == 0
    assert bucket.tokens(10_000) == 10  # never more than one period's worth


def test_a_limiter_bounds_what_it_admits_over_time_to_its_rate_plus_one_burst():
    limiter = Limiter.of(msgs=100, size_bytes=-1, period_ms=1000, now_ms=0)
    assert limiter is not None
    admitted, now = 0, 0
    while now < 10_000:  # a producer offering 1 message every ms for 10 s
        if limiter.wait_ms(now) == 0:
            limiter.take(1, 10, now)
            admitted += 1
        now += 1
    assert 1000 <= admitted <= 1000 + 100


def test_a_dispatch_allowance_is_what_the_bucket_holds_and_none_in_debt():
    limiter = Limiter.of(msgs=5, size_bytes=-1, period_ms=1000, now_ms=0)
    assert limiter is not None
    assert limiter.allowance(100, 0) == 5
    limiter.take(5, 0, 0)
    assert limiter.allowance(100, 0) == 0
    assert limiter.allowance(100, 400) == 2
    assert Limiter.of(-1, 0, 1000, 0) is None


def test_the_backlog_check_compares_bytes_and_the_oldest_messages_age():
    size, age = BacklogQuota(100, -1), BacklogQuota(-1, 60)
    assert not backlog_exceeded(size, "destination_storage", Backlog(100, 1, 0), 0)
    assert backlog_exceeded(size, "destination_storage", Backlog(101, 1, 0), 0)
    assert not backlog_exceeded(age, "message_age", Backlog(10**9, 1_000, 0), 61_000)
    assert backlog_exceeded(age, "message_age", Backlog(1, 1_000, 0), 61_001)
    assert not backlog_exceeded(age, "message_age", Backlog(0, 0, 0), 10**12)  # empty
