"""Policy value objects parse Pulsar's admin bodies and refuse everything else."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.policies import (
    DelayedDeliveryPolicies,
    RetentionPolicies,
    message_ttl_seconds,
)


def test_delayed_delivery_policies_parse_pulsars_body_and_give_it_back():
    body = {"active": False, "tickTime": 250, "maxDeliveryDelayInMillis": 60000}
    policies = DelayedDeliveryPolicies.from_body(body, default_tick_ms=1000)
    assert policies == DelayedDeliveryPolicies(False, 250, 60000)
    assert policies.to_body() == body


def test_delayed_delivery_policies_default_the_tick_and_the_maximum_delay():
    assert DelayedDeliveryPolicies.from_body({"active": True}, 700) == DelayedDeliveryPolicies(
        True, 700, 0
    )
    explicit_nulls = {"active": True, "tickTime": None, "maxDeliveryDelayInMillis": None}
    assert DelayedDeliveryPolicies.from_body(explicit_nulls, 700) == DelayedDeliveryPolicies(
        True, 700, 0
    )


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"tickTime": 1}, "'active'"),
        ({"active": 1}, "'active'"),
        ({"active": True, "tickTime": 0}, "'tickTime'"),
        ({"active": True, "tickTime": True}, "'tickTime'"),
        ({"active": True, "tickTime": "1000"}, "'tickTime'"),
        ({"active": True, "maxDeliveryDelayInMillis": -1}, "'maxDeliveryDelayInMillis'"),
        ({"active": True, "maxDeliveryDelayInMillis": 2**63}, "'maxDeliveryDelayInMillis'"),
        ({"active": True, "tick": 5}, "tick"),
        ([True], "JSON object"),
        (None, "JSON object"),
    ],
)
def test_delayed_delivery_policies_refuse_a_bad_body_naming_the_field(body, names):
    with pytest.raises(InvalidMessage, match=names):
        DelayedDeliveryPolicies.from_body(body, 1000)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"retentionTimeInMinutes": 0, "retentionSizeInMB": 0}, RetentionPolicies(0, 0)),
        ({}, RetentionPolicies(0, 0)),
        ({"retentionTimeInMinutes": -1, "retentionSizeInMB": -1}, RetentionPolicies(-1, -1)),
        ({"retentionTimeInMinutes": 1440, "retentionSizeInMB": -1}, RetentionPolicies(1440, -1)),
        ({"retentionTimeInMinutes": -1, "retentionSizeInMB": 2**40}, RetentionPolicies(-1, 2**40)),
        (
            {"retentionTimeInMinutes": 2**31 - 1, "retentionSizeInMB": 1},
            RetentionPolicies(2**31 - 1, 1),
        ),
    ],
)
def test_retention_policies_take_what_pulsar_takes(body, expected):
    assert RetentionPolicies.from_body(body) == expected
    assert RetentionPolicies.from_body(expected.to_body()) == expected


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"retentionTimeInMinutes": 0, "retentionSizeInMB": 10}, "single time or size limit to 0"),
        ({"retentionTimeInMinutes": 10, "retentionSizeInMB": 0}, "single time or size limit to 0"),
        ({"retentionTimeInMinutes": 10}, "single time or size limit to 0"),
        (
            {"retentionTimeInMinutes": -2, "retentionSizeInMB": 1},
            "'retentionTimeInMinutes' must be from -1",
        ),
        (
            {"retentionTimeInMinutes": 1, "retentionSizeInMB": -2},
            "'retentionSizeInMB' must be from -1",
        ),
        ({"retentionTimeInMinutes": 2**31, "retentionSizeInMB": 1}, "'retentionTimeInMinutes'"),
        ({"retentionTimeInMinutes": 1, "retentionSizeInMB": 2**63}, "'retentionSizeInMB'"),
        ({"retentionTimeInMinutes": 1.0, "retentionSizeInMB": 1}, "must be an integer"),
        ({"retentionTimeInMinutes": True, "retentionSizeInMB": 1}, "must be an integer"),
        ({"retentionTimeInMinutes": None, "retentionSizeInMB": 1}, "must be an integer"),
        ({"retentionTimeInMinutes": 1, "retentionSizeInMB": 1, "x": 1}, "Unknown field"),
        (60, "JSON object"),
    ],
)
def test_retention_policies_refuse_what_pulsar_refuses(body, says):
    with pytest.raises(InvalidMessage, match=says):
        RetentionPolicies.from_body(body)


@pytest.mark.parametrize("seconds", [0, 1, 3600, 2**31 - 1])
def test_a_message_ttl_is_an_integer_from_0_to_int32_max(seconds):
    assert message_ttl_seconds(seconds) == seconds


@pytest.mark.parametrize("value", [-1, 2**31, 1.5, "60", True, None, [60]])
def test_a_message_ttl_refuses_anything_else_as_pulsar_does(value):
    with pytest.raises(InvalidMessage, match="Invalid value for message TTL"):
        message_ttl_seconds(value)
