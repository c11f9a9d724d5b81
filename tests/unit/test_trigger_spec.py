"""The trigger body as a value: defaults, round trip, and each bad field named (400)."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.triggers.spec import Target, TriggerSpec, check_trigger_name

WEBHOOK = {"type": "webhook", "url": "http://127.0.0.1:9/hook", "secret": "s3cret"}


def test_a_body_with_only_a_target_gets_the_documented_defaults():
    spec = TriggerSpec.parse({"target": {"type": "lambda", "function": "orders-fn"}})
    assert (spec.subscription_type, spec.initial_position, spec.batch_size) == (
        "Shared",
        "Latest",
        10,
    )
    assert (spec.maximum_batching_window_ms, spec.maximum_concurrency) == (0, 1)
    assert spec.filter is None and spec.retry is None and spec.dead_letter is None


def test_a_full_body_round_trips_and_the_secret_is_shown_only_when_asked():
    body = {
        "target": WEBHOOK,
        "subscriptionType": "Key_Shared",
        "initialPosition": "Earliest",
        "batchSize": 100,
        "maximumBatchingWindowMs": 500,
        "maximumConcurrency": 4,
        "filter": {"key": [{"prefix": "ord-"}]},
        "retry": {"minDelayMs": 10, "maxDelayMs": 1000, "multiplier": 3.0},
        "deadLetterPolicy": {"maxRedeliverCount": 3},
        "outputTopic": "persistent://public/default/out",
    }
    spec = TriggerSpec.parse(body)
    assert spec.to_body(with_secret=True) == body
    assert "secret" not in spec.to_body()["target"]
    assert TriggerSpec.parse(spec.to_body(with_secret=True)) == spec


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "target"),
        ({"target": {"type": "sqs"}}, "target.type"),
        ({"target": {"type": "lambda", "function": "no spaces"}}, "target.function"),
        ({"target": {**WEBHOOK, "url": "ftp://x/y"}}, "target.url"),
        ({"target": {**WEBHOOK, "secret": ""}}, "target.secret"),
        ({"target": WEBHOOK, "subscriptionType": "Exclusive"}, "subscriptionType"),
        ({"target": WEBHOOK, "initialPosition": "Middle"}, "initialPosition"),
        ({"target": WEBHOOK, "batchSize": 0}, "batchSize"),
        ({"target": WEBHOOK, "batchSize": 10_001}, "batchSize"),
        ({"target": WEBHOOK, "batchSize": True}, "batchSize"),
        ({"target": WEBHOOK, "maximumBatchingWindowMs": 300_001}, "maximumBatchingWindowMs"),
        ({"target": WEBHOOK, "maximumConcurrency": 0}, "maximumConcurrency"),
        ({"target": WEBHOOK, "filter": {"key": "x"}}, "filter.key"),
        ({"target": WEBHOOK, "retry": {"minDelayMs": 5, "maxDelayMs": 1}}, "retry"),
        ({"target": WEBHOOK, "retry": {"multiplier": "x"}}, "retry.multiplier"),
        ({"target": WEBHOOK, "deadLetterPolicy": {"maxRedeliverCount": 0}}, "deadLetterPolicy"),
        (
            {
                "target": WEBHOOK,
                "subscriptionType": "Failover",
                "deadLetterPolicy": {"maxRedeliverCount": 3},
            },
            "deadLetterPolicy",
        ),  # fmt: skip
        ({"target": WEBHOOK, "outputTopic": "a/b"}, "outputTopic"),
        ({"target": WEBHOOK, "batchsize": 5}, "batchsize"),
    ],
)
def test_each_bad_field_is_refused_with_its_name(body, field):
    with pytest.raises(InvalidMessage, match=f"'{field}'"):
        TriggerSpec.parse(body)


def test_a_lambda_target_takes_a_function_arn_with_a_qualifier():
    arn = "arn:aws:lambda:eu-west-1:123456789012:function:orders:live"
    assert Target.parse({"type": "lambda", "function": arn}).function == arn


def test_trigger_names_follow_subscription_names():
    check_trigger_name("orders-to-billing_1")
    with pytest.raises(InvalidMessage, match="Trigger name"):
        check_trigger_name("has/slash")
