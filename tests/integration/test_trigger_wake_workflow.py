"""The trigger wake workflow (infra/statemachines/trigger-wake.asl.json) executed by the
emulator: started through the Step Functions adapter, it waits until its second and invokes
the fan-out function with the wake event the handler reads (moto's simple Lambda answers
with the payload: it runs nothing, the local stack wakes triggers in-process)."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from magnetar_core.adapters.aws.wakes import TriggerWakes
from magnetar_core.domain.triggers.wakes import (
    soonest_wake_ms,
    wake_execution_name,
    woken_topics,
)

ROLE = "magnetar-local-trigger-wake"


@pytest.fixture(scope="module")
def fanout_arn(local_stack) -> str:
    """The fan-out function registered in the emulator's Lambda (by the template's name)."""
    iam, lambdas = local_stack.client("iam"), local_stack.client("lambda")
    trust = {"Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole"}]}  # fmt: skip
    role = iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    created = lambdas.create_function(
        FunctionName=local_stack.name("TriggerFanoutFunction"),
        Runtime="python3.12",
        Role=role["Arn"],
        Handler="app.lambda_handler",
        Code={"ZipFile": b"PK\x05\x06" + b"\x00" * 18},  # an empty zip: nothing runs here
    )
    return created["FunctionArn"]


def _machine_arn(local_stack) -> str:
    machines = {m.logical_id: m.arn for m in local_stack.template.state_machines}
    return machines["TriggerWakeStateMachine"]


def _finished(sfn, execution_arn: str, timeout_s: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.1)  # polling the emulator: no event to wait on
    raise AssertionError(f"{execution_arn} still running after {timeout_s} s")


def test_a_wake_waits_for_its_second_and_invokes_the_fanout_with_the_topic(local_stack, fanout_arn):
    sfn = local_stack.client("stepfunctions")
    topic = f"persistent://public/default/wake-{uuid.uuid4().hex[:8]}"
    machine = _machine_arn(local_stack)
    at_ms = soonest_wake_ms(int(time.time() * 1000))
    TriggerWakes(sfn, machine).wake_at(topic, at_ms)
    TriggerWakes(sfn, machine).wake_at(topic, at_ms)  # another container: the same execution

    execution = (
        f"{machine.replace(':stateMachine:', ':execution:')}:{wake_execution_name(topic, at_ms)}"
    )
    described = _finished(sfn, execution)
    assert described["status"] == "SUCCEEDED", described
    # it waited for its second (moto's Wait drops the fraction of a second left: <= 1 s early)
    assert described["stopDate"].timestamp() * 1000 > at_ms - 1000
    events = sfn.get_execution_history(executionArn=execution)["events"]
    scheduled = [e["taskScheduledEventDetails"] for e in events if e["type"] == "TaskScheduled"]
    assert len(scheduled) == 1 and scheduled[0]["resource"] == "invoke"
    parameters = json.loads(scheduled[0]["parameters"])
    assert parameters["FunctionName"] == fanout_arn
    assert woken_topics(parameters["Payload"]) == [topic]
    listed = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert [e["name"] for e in listed].count(wake_execution_name(topic, at_ms)) == 1
