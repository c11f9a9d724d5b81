"""template.yaml's security: least-privilege roles (who may write the log, delete entries, read
the token key), the token authorizer on every route, the functions' security settings, mutual
TLS and the Cognito issuer."""

from __future__ import annotations

from sam_translation import allowed_actions, inline_policies, transformed

from magnetar_core.domain.security.routes import PUBLIC_ROUTES
from magnetar_local.template import LocalTemplate

SHARED_FIXTURES = (transformed,)  # the SAM translation, made once a run (sam_translation)


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
    actions = allowed_actions(transformed, "ReceiveFunctionRole")
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
        if r["Type"] == "AWS::IAM::Role" and "s3:DeleteObject" in allowed_actions(transformed, lid)
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
        and allowed_actions(transformed, lid) & {"ssm:GetParameter", "kms:Decrypt"}
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
        inline_policies(transformed, "AuthorizerFunctionRole")[0]["PolicyDocument"]
    )
    statements = inline_policies(transformed, "AuthorizerFunctionRole")[0]["PolicyDocument"][
        "Statement"
    ]
    resources = {s["Action"]: s["Resource"]["Fn::Sub"] for s in statements}
    assert resources["ssm:GetParameter"].endswith(":parameter${TokenKeyParameter}")
    decrypt = next(s for s in statements if s["Action"] == "kms:Decrypt")
    assert "PARAMETER_ARN" in str(decrypt["Condition"]) and "kms:ViaService" in str(
        decrypt["Condition"]
    )
    assert allowed_actions(transformed, "AuthorizerFunctionRole") == {
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
    notify = inline_policies(transformed, "NotifyFunctionRole")
    key_statements = [s for p in notify for s in p["PolicyDocument"]["Statement"]
                      if s.get("Action") in ("ssm:GetParameter", "kms:Decrypt")]  # fmt: skip
    assert [s["Sid"] for s in key_statements] == ["ReadTokenKey", "DecryptTokenKey"]
    assert key_statements[0]["Resource"]["Fn::Sub"].endswith(":parameter${TokenKeyParameter}")
    assert "PARAMETER_ARN" in str(key_statements[1]["Condition"])


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
