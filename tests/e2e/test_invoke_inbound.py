"""Inbound sources on the embedded stack as a user tries them: ``magnetar invoke
IngestFunction --event FILE`` (and boto3's ``lambda.invoke`` on the gateway's Lambda Invoke
API) runs the real ingest handler on a sample event; the routed topic holds the event once
however often it is invoked. Functions of the HTTP API are not invocable this way."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

import magnetar as pulsar
from magnetar.cli import main as cli

SAMPLES = Path(__file__).resolve().parents[2] / "events" / "inbound"
EVENTS_TOPIC = "persistent://public/default/inbound-events"  # the template's default route


@pytest.fixture
def lambdas(local_stack):
    return boto3.client(
        "lambda", endpoint_url=local_stack.url, region_name="us-east-1",
        aws_access_key_id="local", aws_secret_access_key="local",
    )  # fmt: skip


def read_all(client: pulsar.Client, topic: str) -> list[pulsar.Message]:
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    messages = []
    while reader.has_message_available():
        messages.append(reader.read_next(5000))
    reader.close()
    return messages


def test_magnetar_invoke_stores_an_eventbridge_event_once_however_often_it_is_invoked(
    local_stack, client, capsys, lambdas, tmp_path
):
    # the sample with an id of its own: the session's stack may have stored the sample
    # itself (examples/inbound.sh invokes it too), and this test counts the first store
    sample = json.loads((SAMPLES / "eventbridge_rule.json").read_text())
    event = tmp_path / "eventbridge_rule.json"
    event.write_text(json.dumps({**sample, "id": str(uuid.uuid4())}))
    for _ in range(2):
        assert cli.main(["invoke", "IngestFunction", "--event", str(event),
                         "--service-url", local_stack.url]) == 0  # fmt: skip
    answer = lambdas.invoke(FunctionName="IngestFunction", Payload=event.read_bytes())
    assert answer["StatusCode"] == 200 and "FunctionError" not in answer
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    answers = [line for line in lines if "ingested" in line]  # the handlers' logs aside
    assert [answer["ingested"][0]["duplicate"] for answer in answers] == [False, True]

    sent = json.loads(event.read_text())
    stored = [m for m in read_all(client, EVENTS_TOPIC) if json.loads(m.data())["id"] == sent["id"]]
    assert len(stored) == 1
    assert stored[0].partition_key() == sent["detail"]["orderId"]


def test_a_raising_handler_comes_back_as_a_function_error_and_stores_nothing(
    local_stack, lambdas, capsys
):
    bad = (SAMPLES / "bad_s3_object_removed.json").read_bytes()
    answer = lambdas.invoke(FunctionName="IngestFunction", Payload=bad)
    assert answer["FunctionError"] == "Unhandled"
    assert json.loads(answer["Payload"].read())["errorType"] == "InvalidMessage"
    assert cli.main(["invoke", "IngestFunction", "--event", str(SAMPLES / "bad_s3_object_removed.json"),
                     "--service-url", local_stack.url]) == 1  # fmt: skip
    assert "InvalidMessage" in capsys.readouterr().err


def test_unknown_or_http_api_functions_and_bad_requests_are_refused_as_lambda_does(
    local_stack, lambdas, tmp_path, capsys
):
    for name in ("NoSuchFunction", "ProduceFunction", "TriggerFanoutFunction"):
        with pytest.raises(ClientError) as refused:
            lambdas.invoke(FunctionName=name, Payload=b"{}")
        assert refused.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert "IngestFunction" in refused.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as refused:
        lambdas.invoke(FunctionName="IngestFunction", Payload=b"{not json")
    assert refused.value.response["Error"]["Code"] == "InvalidRequestContentException"
    dry = lambdas.invoke(FunctionName="IngestFunction", InvocationType="DryRun", Payload=b"{}")
    assert dry["StatusCode"] == 204
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert cli.main(["invoke", "IngestFunction", "--event", str(broken),
                     "--service-url", local_stack.url]) == 2  # fmt: skip
    assert "is not JSON" in capsys.readouterr().err
