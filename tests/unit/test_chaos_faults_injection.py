"""magnetar chaos injects faults at botocore's send: AWS's own error answers (retried by
botocore as on AWS), and "the handler dies here" (not retried: the invocation ends)."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from magnetar_chaos.faults import FaultInjector, FaultPlan
from magnetar_local.handlers import InvocationAbandoned

# nothing listens there: a request that reached the network would fail to connect
NOWHERE = "http://127.0.0.1:9"


def client(service: str, injector: FaultInjector):
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x",
                                    region_name="us-east-1")  # fmt: skip
    config = Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=1)
    return injector.install(session.client(service, endpoint_url=NOWHERE, config=config))


def test_injected_throttling_is_aws_s_own_error_and_botocore_retries_it():
    injector = FaultInjector(FaultPlan(rate_per_call=1.0, kinds=("throttle",)))
    with pytest.raises(ClientError) as raised:
        client("dynamodb", injector).get_item(TableName="t", Key={"pk": {"S": "a"}})
    assert raised.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert injector.summary()["injected"]["throttle"]["dynamodb.GetItem"] >= 2  # retried


def test_an_injected_5xx_on_s3_is_an_internal_error():
    injector = FaultInjector(FaultPlan(rate_per_call=1.0, kinds=("5xx",)))
    with pytest.raises(ClientError) as raised:
        client("s3", injector).get_object(Bucket="b", Key="k")
    assert raised.value.response["Error"]["Code"] == "InternalError"


def test_a_handler_death_ends_the_call_at_once_without_retries():
    injector = FaultInjector(FaultPlan(rate_per_call=1.0, kinds=("die",), seed=2))
    ddb = client("dynamodb", injector)
    with pytest.raises(InvocationAbandoned):
        ddb.put_item(TableName="t", Item={"pk": {"S": "a"}})
    assert injector.calls == 1


def test_operations_outside_the_plan_and_a_disabled_injector_are_left_alone():
    plan = FaultPlan(rate_per_call=1.0, kinds=("die",), operations=frozenset({"s3.PutObject"}))
    injector = FaultInjector(plan)
    injector.enabled = False
    with pytest.raises(EndpointConnectionError):  # reached the network: nothing listens
        client("s3", injector).put_object(Bucket="b", Key="k", Body=b"x")
    with pytest.raises(EndpointConnectionError):
        client("dynamodb", FaultInjector(plan)).get_item(TableName="t", Key={"pk": {"S": "a"}})


def test_a_plan_refuses_unknown_kinds_and_rates_outside_0_to_1():
    with pytest.raises(ValueError, match="unknown fault kinds"):
        FaultPlan.parse("throttle,flood", 0.1, 1)
    with pytest.raises(ValueError, match="within"):
        FaultPlan(rate_per_call=1.5)
    assert FaultPlan.parse("none", 0.3, 1).rate_per_call == 0.0
