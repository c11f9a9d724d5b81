"""Where function batches go: to the function runner Lambda (the request shape a botocore
Stubber checks; moto cannot run it) with the function's definition and code; the runner's
handler running a batch through the HTTP API (the memory service); and the CLI's
requests."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from magnetar.cli.functions import parser, request
from magnetar_core.adapters.aws.lambda_target import LambdaTarget
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.targets import Targets
from magnetar_core.api import function_zygote
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

ROOT = Path(__file__).resolve().parents[2]
CODE = "import magnetar as pulsar\nclass Up(pulsar.Function):\n    def process(self, i, c):\n        return i.upper()\n"  # fmt: skip
BODY = {"className": "up.Up", "code": CODE, "inputs": ["in"], "output": "out"}
FUNCTION = Target("function", function="public/default/up")


def test_with_a_runner_a_function_batch_is_one_lambda_invoke_carrying_the_definition_and_records():
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")  # fmt: skip
    engine = Engine.assemble(
        memory_settings(function_runner="stack-function-runner"), memory_stores(),
        targets=Targets(lambdas=LambdaTarget(lambda: client)),
    )  # fmt: skip
    engine.tenants.initialize_cluster()
    config, _ = engine.functions.put("public", "default", "up", BODY)
    batch = {"records": [{"messageId": "1:0:-1:-1"}]}
    expected = {"function": "public/default/up", "config": config.stored_body(), "version": 1,
                "records": batch["records"], "token": None}  # fmt: skip
    with Stubber(client) as stub:
        stub.add_response(
            "invoke",
            {"StatusCode": 200, "Payload": io.BytesIO(b'{"batchItemFailures": []}')},
            {
                "FunctionName": "stack-function-runner",
                "InvocationType": "RequestResponse",
                "Payload": json.dumps(expected).encode(),
            },  # fmt: skip
        )
        answer = engine.function_dispatcher.invoke(FUNCTION, json.dumps(batch).encode(), 1)
        stub.assert_no_pending_responses()
    assert answer == TargetAnswer(200, b'{"batchItemFailures": []}')
    assert config.stored_body()["code"] == CODE  # the runner reads no store: the code travels


def _runner_handler():
    path = ROOT / "functions/function_runner/app.py"
    spec = importlib.util.spec_from_file_location("function_runner_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lambda_handler


def test_the_runner_handler_runs_the_batch_it_is_sent_through_the_http_api(svc, monkeypatch):
    monkeypatch.setenv("MAGNETAR_API_URL", svc.url)
    monkeypatch.setattr(function_zygote, "undumpable", lambda: None)  # not the test process
    config, _ = svc.engine.functions.put("public", "default", "up", BODY)
    record = {"messageId": "1:0:-1:-1", "topic": "persistent://public/default/in", "key": None,
              "payload": base64.b64encode(b"hi").decode(), "properties": {}, "eventTime": 0}  # fmt: skip
    event = {"function": "public/default/up", "config": config.stored_body(), "version": 1,
             "records": [record], "token": None}  # fmt: skip

    answer = _runner_handler()(event, None)

    assert answer["batchItemFailures"] == [] and answer["processed"] == 1
    assert answer["userExceptions"] == []
    assert svc.engine.subscriptions.last_message_id(TopicName.parse("out")) is not None


def test_the_runner_refuses_a_batch_without_a_definition_and_a_missing_api_url(monkeypatch):
    monkeypatch.setenv("MAGNETAR_API_URL", "http://127.0.0.1:9")
    monkeypatch.setattr(function_zygote, "undumpable", lambda: None)
    with pytest.raises(TargetFailed, match="no function definition"):
        _runner_handler()({"function": "public/default/up", "records": []}, None)
    monkeypatch.delenv("MAGNETAR_API_URL")
    handler = _runner_handler()  # loads: the URL is read on the first batch
    with pytest.raises(TargetFailed, match="MAGNETAR_API_URL"):
        handler({"function": "public/default/up", "records": []}, None)


def test_the_cli_sends_the_file_with_pulsar_admins_flags(tmp_path):
    source = tmp_path / "up.py"
    source.write_text(CODE)
    args = parser().parse_args(["create", "--py", str(source), "--classname", "up.Up",
                                "--inputs", "a, b", "--output", "o", "--tenant", "t",
                                "--user-config", '{"k": 1}', "--max-message-retries", "3"])  # fmt: skip
    method, path, body = request(args)
    assert (method, path) == ("POST", "/admin/v3/functions/t/default/Up")  # register
    assert body == {"className": "up.Up", "code": CODE, "inputs": ["a", "b"], "output": "o",
                    "userConfig": {"k": 1}, "subscriptionPosition": "Latest",
                    "maxMessageRetries": 3}  # fmt: skip
    update = parser().parse_args(["update", "--py", str(source), "--classname", "up.Up",
                                  "--inputs", "a", "--fqfn", "t/n/f"])  # fmt: skip
    assert request(update)[:2] == ("PUT", "/admin/v3/functions/t/n/f")  # create or replace
    assert request(parser().parse_args(["delete", "--fqfn", "t/n/f"])) == ("DELETE", "/admin/v3/functions/t/n/f", None)  # fmt: skip
    assert request(parser().parse_args(["list"])) == ("GET", "/admin/v3/functions/public/default", None)  # fmt: skip
    with pytest.raises(ValueError, match="--py"):
        request(parser().parse_args(["create", "--py", str(tmp_path / "no.py"), "--classname", "a.B", "--inputs", "x"]))  # fmt: skip
    with pytest.raises(ValueError, match="--name or --fqfn"):
        request(parser().parse_args(["get"]))
