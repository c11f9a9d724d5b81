"""Policy value objects parse Pulsar's admin bodies and refuse everything else."""

from __future__ import annotations

import pytest

from magnetar_core.errors import InvalidMessage
from magnetar_core.policy_values import DelayedDeliveryPolicies


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
