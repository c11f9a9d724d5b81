"""template.yaml is valid CloudFormation + SAM, its functions, streams, workflows and channel are
wired as the engine expects, and every route has its handler directory (its security:
test_template_security.py)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from sam_translation import (
    ROOT,
    allowed_actions,
    inline_policies,
    lint_errors,
    transformed,
    yaml_parse,
)

from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

SHARED_FIXTURES = (transformed,)  # the SAM translation, made once a run (sam_translation)


def test_the_template_passes_cfn_lint_without_errors():
    from cfnlint.api import lint_file  # imports sympy: ~1.5 CPU-s in every worker collecting

    assert lint_errors(lint_file(DEFAULT_TEMPLATE)) == []


def test_cfn_lint_really_runs_on_this_template_and_catches_a_broken_table():
    from cfnlint.api import lint

    document = yaml_parse(DEFAULT_TEMPLATE.read_text())
    table = document["Resources"]["LogTable"]
    # the template's own table alone (linting the whole template again costs seconds), with
    # the parameters and conditions its properties refer to (deletion protection)
    alone = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": document["Parameters"],
        "Conditions": document["Conditions"],
        "Resources": {"LogTable": table},
    }
    assert lint_errors(lint(yaml.safe_dump(alone), regions=["us-east-1"])) == []
    del table["Properties"]["KeySchema"]
    assert lint_errors(lint(yaml.safe_dump(alone), regions=["us-east-1"])) != []


def test_the_sam_translator_turns_every_function_into_an_arm64_python312_lambda(transformed):
    functions = {
        lid: r
        for lid, r in transformed["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function"
    }
    assert set(functions) == {
        "NotifyFunction",
        "ProduceFunction",
        "ProducersFunction",
        "ConsumersFunction",
        "ReceiveFunction",
        "AckFunction",
        "NackFunction",
        "AdminFunction",
        "TenancyFunction",
        "AuthorizerFunction",
        "IngestFunction",
        "FunctionRunnerFunction",
        "TriggerFanoutFunction",
        "ConsoleFunction",
        "DataPlaneFunction",  # FrontDoor: FunctionUrl only
    }
    assert functions["DataPlaneFunction"]["Condition"] == "UseFunctionUrl"
    for lid, resource in functions.items():
        properties = resource["Properties"]
        assert properties["Runtime"] == "python3.12"
        assert properties["Architectures"] == ["arm64"]
        # the data plane's code is functions/: it loads the handler apps beside its own
        handler = "dataplane.app.lambda_handler" if lid == "DataPlaneFunction" else "app.lambda_handler"  # fmt: skip
        assert properties["Handler"] == handler
        assert len(properties["Layers"]) == 1
        assert {"TOPICS_TABLE", "LOG_TABLE", "CURSORS_TABLE", "ENTRIES_BUCKET"} <= set(
            properties["Environment"]["Variables"]
        )


def test_the_log_tables_inserts_feed_the_trigger_fanout_with_partial_batch_failures(transformed):
    resources = transformed["Resources"]
    stream = resources["LogTable"]["Properties"]["StreamSpecification"]
    assert stream == {"StreamViewType": "KEYS_ONLY"}
    mappings = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and r["Properties"]["FunctionName"] == {"Ref": "TriggerFanoutFunction"}
    ]
    assert len(mappings) == 1
    mapping = mappings[0]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["LogTable", "StreamArn"]}
    assert mapping["FilterCriteria"] == {"Filters": [{"Pattern": '{"eventName": ["INSERT"]}'}]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    assert 0 < mapping["MaximumRetryAttempts"] <= 100
    failure = mapping["DestinationConfig"]["OnFailure"]["Destination"]
    assert failure == {"Fn::GetAtt": ["TriggerFanoutFailureQueue", "Arn"]}
    role = resources["TriggerFanoutFunctionRole"]["Properties"]
    assert any(arn.endswith("/AWSLambdaDynamoDBExecutionRole") for arn in role["ManagedPolicyArns"])
    actions = allowed_actions(transformed, "TriggerFanoutFunctionRole")
    assert "sqs:SendMessage" in actions
    assert "lambda:InvokeFunction" in actions and "s3:DeleteObject" not in actions


def test_the_trigger_wake_workflow_invokes_the_fanout_and_the_functions_that_wake_may_start_it(
    transformed,
):
    template = LocalTemplate()
    machine = next(m for m in template.state_machines if m.logical_id == "TriggerWakeStateMachine")
    fanout = template.functions["TriggerFanoutFunction"]
    wake = json.loads(machine.definition)["States"]["Wake"]
    assert wake["Resource"] == "arn:aws:states:::lambda:invoke"
    assert wake["Parameters"]["FunctionName"].endswith(f":function:{fanout.name}")
    for spec in template.functions.values():  # the ARN every function is given is the machine's
        assert spec.environment["TRIGGER_WAKE_STATE_MACHINE_ARN"] == machine.arn, spec.logical_id
    for role in ("TriggerFanoutFunctionRole", "AdminFunctionRole"):
        assert "states:StartExecution" in allowed_actions(transformed, role), role
    assert "lambda:InvokeFunction" in allowed_actions(transformed, "TriggerWakeStateMachineRole")


def test_the_express_timer_is_the_standard_timer_run_as_express_and_startable_alike(
    transformed,
):
    template = LocalTemplate()
    machines = {m.logical_id: m for m in template.state_machines}
    standard = machines["RedeliveryTimerStateMachine"]
    express = machines["RedeliveryTimerExpressStateMachine"]
    assert (standard.type, express.type) == ("STANDARD", "EXPRESS")
    assert express.definition == standard.definition
    for spec in template.functions.values():
        assert spec.environment["TIMER_EXPRESS_STATE_MACHINE_ARN"] == express.arn
        assert spec.environment["TIMER_EXPRESS_MAX_WAIT_MS"] == "60000"
    roles = [name for name, r in transformed["Resources"].items() if r["Type"] == "AWS::IAM::Role"]
    for role in roles:
        policies = json.dumps(inline_policies(transformed, role))
        starts_standard = '"RedeliveryTimerStateMachine", "Name"' in policies
        assert starts_standard == ('"RedeliveryTimerExpressStateMachine", "Name"' in policies), role


def test_the_notification_channel_is_a_websocket_api_whose_routes_reach_its_function(transformed):
    resources = transformed["Resources"]
    assert resources["NotifyApi"]["Properties"]["ProtocolType"] == "WEBSOCKET"
    routes = {r["Properties"]["RouteKey"]: r["Properties"] for r in resources.values()
              if r["Type"] == "AWS::ApiGatewayV2::Route"}  # fmt: skip
    assert set(routes) == {"$connect", "$disconnect", "watch"}
    assert all(
        r["Target"] == {"Fn::Sub": "integrations/${NotifyIntegration}"} for r in routes.values()
    )
    assert (
        "NotifyFunction.Arn"
        in resources["NotifyIntegration"]["Properties"]["IntegrationUri"]["Fn::Sub"]
    )
    assert resources["NotifyWatchRouteResponse"]["Properties"]["RouteResponseKey"] == "$default"
    ttl = resources["NotifyTable"]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": "expiresAt", "Enabled": True}
    for waker in ("TriggerFanout", "Consumers", "Nack", "Admin"):  # commits, redeliveries
        assert "execute-api:ManageConnections" in allowed_actions(
            transformed, waker + "FunctionRole"
        )


def test_every_http_route_points_at_an_existing_function_directory():
    template = LocalTemplate()
    assert len(template.routes) == 38  # AdminFunction: one ANY /admin/{proxy+} route
    assert len(default_served_routes()) == 155  # with the admin app's routes behind it
    for route in template.routes:
        code_dir = template.functions[route.function].code_dir
        assert code_dir.is_dir(), f"{route.route_key}: {code_dir} does not exist"
        assert Path(ROOT / "functions") in code_dir.parents


def test_the_core_layer_requirements_match_the_pinned_versions():
    # the layer holds magnetar_core (pins in pyproject.toml) and magnetar_wire (sdk/pyproject.toml)
    pyproject = (ROOT / "pyproject.toml").read_text() + (ROOT / "sdk/pyproject.toml").read_text()
    requirements = (ROOT / "layers/core/python/requirements.txt").read_text().split()
    pins = [line for line in requirements if "==" in line]
    assert {pin.split("==")[0] for pin in pins} == {
        "aws-lambda-powertools",
        "lz4",
        "mmh3",
        "crc32c",
        "zstandard",
        "cramjam",
        "pyjwt",  # magnetar_wire.tokens: the service validates Pulsar tokens
        "cryptography",
        "bcrypt",  # services.basic_auth: htpasswd's bcrypt entries
        "passlib",  # and its apr1 and crypt ones
    }
    for pin in pins:
        assert f'"{pin}"' in pyproject
