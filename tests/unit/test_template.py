"""template.yaml is valid CloudFormation + SAM, and every route has its handler directory."""

from __future__ import annotations

import copy
import fcntl
import json
import os
from pathlib import Path

import boto3
import pytest
import yaml
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator
from samtranslator.yaml_helper import yaml_parse

from magnetar_core.domain.security.routes import PUBLIC_ROUTES
from magnetar_local.cfn import Resolver
from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

ROOT = DEFAULT_TEMPLATE.parent


def _errors(matches):
    return [str(match) for match in matches if match.rule.id.startswith("E")]


def language_extensions(document: dict, parameters: dict[str, str] | None = None) -> dict:
    """What AWS::LanguageExtensions (the template's first transform) hands SAM where SAM
    needs literals: the HttpApi's ``Auth`` with its ``Fn::If`` resolved for the parameter
    values (``parameters`` over the defaults). The template's other ``Fn::If`` are left to
    CloudFormation, which resolves them to the same values."""
    document = copy.deepcopy(document)
    assert document["Transform"] == ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]
    values = {name: spec.get("Default") for name, spec in document["Parameters"].items()}
    values.update(parameters or {})
    resolver = Resolver(values, {}, document["Conditions"])

    def resolve_ifs(value: object) -> object:
        if isinstance(value, dict) and set(value) == {"Fn::If"}:
            condition, when_true, when_false = value["Fn::If"]
            return resolve_ifs(when_true if resolver.condition(condition) else when_false)
        if isinstance(value, dict):
            return {key: resolve_ifs(item) for key, item in value.items()}
        if isinstance(value, list):
            return [resolve_ifs(item) for item in value]
        return value

    if "HttpApi" in document["Resources"]:  # a part of the template may leave it out
        api = document["Resources"]["HttpApi"]["Properties"]
        api["Auth"] = resolve_ifs(api["Auth"])
    document["Transform"] = "AWS::Serverless-2016-10-31"
    return document


def _sam_transform(document: dict, parameters: dict[str, str] | None = None) -> dict:
    """Transform like `sam deploy` does after `sam package` (local URIs become s3:// URIs),
    AWS::LanguageExtensions first (``language_extensions``, for ``parameters``)."""
    document = language_extensions(document, parameters)
    for resource in document["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://magnetar-artifacts/{properties[key].rstrip('/')}"
    translator = Translator(None, Parser(), boto_session=boto3.Session(region_name="us-east-1"))
    managed = {
        "AWSLambdaBasicExecutionRole": "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
    }
    return translator.translate(
        document, parameter_values={}, get_managed_policy_map=lambda: managed
    )


@pytest.fixture(scope="session")
def transformed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """template.yaml as SAM translates it, translated once a run (seconds: every one of the
    38 routes copies the whole OpenAPI body): under pytest-xdist the first worker to need
    it writes it as JSON to the run's shared temporary directory, under a lock, and the other
    workers read it (the module's tests are spread over several workers)."""
    basetemp = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # None without pytest-xdist
    shared = basetemp.parent if worker else basetemp  # the run's, never an older run's
    path = shared / "template-sam-transformed.json"
    with open(shared / "template-sam-transformed.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not path.exists():
            document = _sam_transform(yaml_parse(DEFAULT_TEMPLATE.read_text()))
            path.write_text(json.dumps(document))
    return json.loads(path.read_text())


def test_the_template_passes_cfn_lint_without_errors():
    from cfnlint.api import lint_file  # imports sympy: ~1.5 CPU-s in every worker collecting

    assert _errors(lint_file(DEFAULT_TEMPLATE)) == []


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
    assert _errors(lint(yaml.safe_dump(alone), regions=["us-east-1"])) == []
    del table["Properties"]["KeySchema"]
    assert _errors(lint(yaml.safe_dump(alone), regions=["us-east-1"])) != []


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
    actions = _allowed_actions(transformed, "TriggerFanoutFunctionRole")
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
        assert "states:StartExecution" in _allowed_actions(transformed, role), role
    assert "lambda:InvokeFunction" in _allowed_actions(transformed, "TriggerWakeStateMachineRole")


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
        policies = json.dumps(_policies(transformed, role))
        starts_standard = '"RedeliveryTimerStateMachine", "Name"' in policies
        assert starts_standard == ('"RedeliveryTimerExpressStateMachine", "Name"' in policies), role


def _policies(transformed: dict, role: str) -> list[dict]:
    """The role's inline policies; a conditional one (``Fn::If``) as when its condition holds."""
    listed = transformed["Resources"][role]["Properties"].get("Policies", [])
    return [p["Fn::If"][1] if "Fn::If" in p else p for p in listed]


def _allowed_actions(transformed: dict, role: str) -> set[str]:
    actions: set[str] = set()
    for policy in _policies(transformed, role):
        for statement in policy["PolicyDocument"]["Statement"]:
            listed = statement["Action"]
            actions.update([listed] if isinstance(listed, str) else listed)
    return actions


def test_the_function_runner_may_only_write_its_own_log_group(transformed):
    resources = transformed["Resources"]
    runner = resources["FunctionRunnerFunction"]["Properties"]
    assert runner["Role"] == {"Fn::GetAtt": ["FunctionRunnerRole", "Arn"]}
    role = resources["FunctionRunnerRole"]["Properties"]
    assert "ManagedPolicyArns" not in role  # not even AWSLambdaBasicExecutionRole's logs:*
    always = [p for p in role["Policies"] if "PolicyDocument" in p]
    traced = [p["Fn::If"] for p in role["Policies"] if "Fn::If" in p]
    # with TracingEnabled only: X-Ray's write actions (SAM adds them only to roles it makes)
    assert [(t[0], t[2]) for t in traced] == [("TracingOn", {"Ref": "AWS::NoValue"})]
    xray = {a for s in traced[0][1]["PolicyDocument"]["Statement"] for a in s["Action"]}
    assert xray == {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
    statements = [s for p in always for s in p["PolicyDocument"]["Statement"]]
    assert statements == [{"Sid": "WriteOwnLogs", "Effect": "Allow",
                           "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                           "Resource": {"Fn::Sub": "${FunctionRunnerLogGroup.Arn}"}}]  # fmt: skip
    group = resources["FunctionRunnerLogGroup"]["Properties"]["LogGroupName"]
    assert group == {"Fn::Sub": "/aws/lambda/${AWS::StackName}-function-runner"}
    assert runner["Environment"]["Variables"]["MAGNETAR_API_URL"]["Fn::Sub"].startswith("https://${HttpApi}")  # fmt: skip


def test_the_receive_function_may_not_write_entries_or_the_log(transformed):
    actions = _allowed_actions(transformed, "ReceiveFunctionRole")
    assert "s3:GetObject" in actions
    assert "dynamodb:UpdateItem" in actions  # cursors
    assert not actions & {"s3:PutObject", "s3:DeleteObject"}
    receive_policies = transformed["Resources"]["ReceiveFunctionRole"]["Properties"]["Policies"]
    log_writers = [
        p for p in receive_policies if "dynamodb:PutItem" in str(p) and "LogTable" in str(p)
    ]
    assert log_writers == []


def test_only_the_admin_function_and_the_maintenance_jobs_may_delete_entries(transformed):
    deleters = {
        lid
        for lid, r in transformed["Resources"].items()
        if r["Type"] == "AWS::IAM::Role" and "s3:DeleteObject" in _allowed_actions(transformed, lid)
    }
    # and the function-URL front door, which serves the admin routes (FrontDoor: FunctionUrl)
    assert deleters == {"AdminFunctionRole", "GlueJobRole", "DataPlaneFunctionRole"}
    assert transformed["Resources"]["DataPlaneFunctionRole"]["Condition"] == "UseFunctionUrl"


def test_every_route_of_the_api_runs_the_token_authorizer_first(transformed):
    body = transformed["Resources"]["HttpApi"]["Properties"]["Body"]
    operations = [
        (path, method, operation)
        for path, item in body["paths"].items()
        for method, operation in item.items()
        if "x-amazon-apigateway-integration" in operation
    ]
    assert len(operations) == len(LocalTemplate().routes)
    unguarded = {(m.upper(), p) for p, m, o in operations if o.get("security") != [{"TokenAuthorizer": []}]}  # fmt: skip
    assert unguarded == PUBLIC_ROUTES  # the console's static files (Authorizer: NONE)


def test_the_authorizer_is_a_cached_payload_2_request_authorizer_on_the_authorization_header(
    transformed,
):
    scheme = transformed["Resources"]["HttpApi"]["Properties"]["Body"]["components"][
        "securitySchemes"
    ]["TokenAuthorizer"]["x-amazon-apigateway-authorizer"]
    assert scheme["type"] == "request"
    assert scheme["authorizerPayloadFormatVersion"] == "2.0"
    assert scheme["enableSimpleResponses"] is True
    assert scheme["identitySource"] == ["$request.header.Authorization"]
    assert scheme["authorizerResultTtlInSeconds"] == {"Ref": "AuthorizerCacheSeconds"}
    assert "AuthorizerFunction" in str(scheme["authorizerUri"])
    assert "HttpApiTokenAuthorizerAuthorizerPermission" in transformed["Resources"]


def test_only_the_authorizers_may_read_the_token_key_and_only_that_parameter(transformed):
    readers = {
        lid
        for lid, r in transformed["Resources"].items()
        if r["Type"] == "AWS::IAM::Role"
        and _allowed_actions(transformed, lid) & {"ssm:GetParameter", "kms:Decrypt"}
    }
    # the notification channel's $connect (api.notify) and the function-URL front door run the authorizer's check themselves (FrontDoor: FunctionUrl);
    # the trigger fan-out signs Pulsar Functions' per-batch tokens (authentication on only)
    assert readers == {"AuthorizerFunctionRole", "DataPlaneFunctionRole", "NotifyFunctionRole",
                       "TriggerFanoutFunctionRole"}  # fmt: skip
    fanout = transformed["Resources"]["TriggerFanoutFunctionRole"]["Properties"]["Policies"]
    signing = [p for p in fanout if "ssm:GetParameter" in str(p)]
    assert [p["Fn::If"][0] for p in signing] == ["AuthenticationOn"]
    conditional = [
        p for p in transformed["Resources"]["DataPlaneFunctionRole"]["Properties"]["Policies"]
        if "ssm:GetParameter" in str(p)
    ]  # fmt: skip
    # the token key, and the Basic users' secret (BasicAuthSecret set, authentication on)
    assert [p["Fn::If"][0] for p in conditional] == ["FunctionUrlWithAuthentication", "BasicAuthOn"]
    assert str(conditional[0]["Fn::If"][1]["PolicyDocument"]) == str(
        _policies(transformed, "AuthorizerFunctionRole")[0]["PolicyDocument"]
    )
    statements = _policies(transformed, "AuthorizerFunctionRole")[0]["PolicyDocument"]["Statement"]
    resources = {s["Action"]: s["Resource"]["Fn::Sub"] for s in statements}
    assert resources["ssm:GetParameter"].endswith(":parameter${TokenKeyParameter}")
    decrypt = next(s for s in statements if s["Action"] == "kms:Decrypt")
    assert "PARAMETER_ARN" in str(decrypt["Condition"]) and "kms:ViaService" in str(
        decrypt["Condition"]
    )
    assert _allowed_actions(transformed, "AuthorizerFunctionRole") == {
        "ssm:GetParameter",
        "kms:Decrypt",
        "secretsmanager:GetSecretValue",
    }
    for role in ("AuthorizerFunctionRole", "DataPlaneFunctionRole", "NotifyFunctionRole"):
        basic = [p for p in transformed["Resources"][role]["Properties"]["Policies"]
                 if "ReadBasicAuthUsers" in str(p)]  # fmt: skip
        assert [p["Fn::If"][0] for p in basic] == ["BasicAuthOn"], role
        (statement,) = basic[0]["Fn::If"][1]["PolicyDocument"]["Statement"]
        resources = [r["Fn::Sub"] for r in statement["Resource"]]
        assert resources[0].endswith(":parameter/aws/reference/secretsmanager/${BasicAuthSecret}")
        assert resources[1].endswith(":secret:${BasicAuthSecret}-??????")
    notify = _policies(transformed, "NotifyFunctionRole")
    key_statements = [s for p in notify for s in p["PolicyDocument"]["Statement"]
                      if s.get("Action") in ("ssm:GetParameter", "kms:Decrypt")]  # fmt: skip
    assert [s["Sid"] for s in key_statements] == ["ReadTokenKey", "DecryptTokenKey"]
    assert key_statements[0]["Resource"]["Fn::Sub"].endswith(":parameter${TokenKeyParameter}")
    assert "PARAMETER_ARN" in str(key_statements[1]["Condition"])


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
        assert "execute-api:ManageConnections" in _allowed_actions(
            transformed, waker + "FunctionRole"
        )


def test_every_function_gets_the_security_settings_and_auth_is_on_by_default():
    template = LocalTemplate()
    assert template.document["Parameters"]["AuthenticationEnabled"]["Default"] == "true"
    for spec in template.functions.values():
        env = spec.environment
        assert env["AUTHENTICATION_ENABLED"] == "true", spec.logical_id
        assert env["TOKEN_KEY_PARAMETER"] == "/magnetar/token-key"
        assert {"SUPERUSER_ROLES", "CLUSTER_NAME", "DOWNLOAD_URL_EXPIRY_S"} <= set(env)
        assert env["ANONYMOUS_USER_ROLE"] == env["BASIC_AUTH_SECRET"] == ""  # both off
        assert env["TLS_CLIENT_AUTHENTICATION"] == "false"


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


def test_a_client_certificate_domain_maps_the_api_with_mutual_tls_from_the_truststore(transformed):
    resources = transformed["Resources"]
    domain, mapping = resources["MutualTlsDomain"], resources["MutualTlsApiMapping"]
    assert domain["Condition"] == mapping["Condition"] == "MutualTlsOn"
    tls = domain["Properties"]["MutualTlsAuthentication"]
    assert tls["TruststoreUri"] == {"Ref": "ClientCertificateTruststoreUri"}
    assert mapping["Properties"]["ApiId"] == {"Ref": "HttpApi"}
    assert mapping["Properties"]["DomainName"] == {"Ref": "MutualTlsDomain"}
    env = resources["AdminFunction"]["Properties"]["Environment"]["Variables"]
    assert env["TLS_CLIENT_AUTHENTICATION"] == {"Fn::If": ["MutualTlsOn", "true", "false"]}


def test_a_cognito_user_pool_is_the_oauth2_issuer_when_a_domain_prefix_is_given(transformed):
    resources = transformed["Resources"]
    for name in ("CognitoUserPool", "CognitoUserPoolDomain", "CognitoResourceServer"):
        assert resources[name]["Condition"] == "CreateCognitoIssuer", name
    assert resources["CognitoResourceServer"]["Properties"]["Identifier"] == "magnetar"
    env = resources["AuthorizerFunction"]["Properties"]["Environment"]["Variables"]
    issuer = env["OAUTH2_ISSUER"]["Fn::If"]
    assert issuer[0] == "CreateCognitoIssuer" and "cognito-idp" in issuer[1]["Fn::Sub"]
    assert issuer[2] == {"Ref": "OAuth2Issuer"}
    assert env["OAUTH2_ROLE_CLAIM"] == {"Ref": "OAuth2RoleClaim"}
