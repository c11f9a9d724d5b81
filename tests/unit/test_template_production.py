"""template.yaml's production defaults: backups and deletion protection, TLS-only buckets, log
groups with retention, access logs and throttling, tracing, timeouts under the API's limit,
alarms for each kind of failure, encrypted Glue jobs (docs/operating.md, "Production
defaults")."""

from __future__ import annotations

import json
import re

import pytest
from sam_translation import transformed

from magnetar_local.cfn import load_yaml
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

SHARED_FIXTURES = (transformed,)  # the SAM translation, made once a run (sam_translation)
ROOT = DEFAULT_TEMPLATE.parent
SOURCE = load_yaml(DEFAULT_TEMPLATE)
TOPIC = {"Fn::If": ["CreateAlarmTopic", {"Ref": "AlarmTopic"}, {"Ref": "AlarmTopicArn"}]}
API_INTEGRATION_LIMIT_S = 30


def _of_type(resources: dict, kind: str) -> dict[str, dict]:
    return {lid: r for lid, r in resources.items() if r["Type"] == kind}


def _alarm_metrics(resources: dict) -> list[tuple[dict, str, str, dict]]:
    """(alarm, namespace, metric name, dimensions) for every metric of every alarm."""
    found = []
    for alarm in _of_type(resources, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        stats = [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]
        if "MetricName" in props:
            stats.append(props)
        for metric in stats:
            dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
            found.append((alarm, metric["Namespace"], metric["MetricName"], dims))
    return found


def _alarmed(resources: dict, namespace: str, metric: str) -> list[tuple[dict, dict]]:
    return [
        (a, dims)
        for a, ns, name, dims in _alarm_metrics(resources)
        if (ns, name) == (namespace, metric)
    ]


def test_every_table_has_point_in_time_recovery_and_deletion_protection_by_parameter():
    tables = _of_type(SOURCE["Resources"], "AWS::DynamoDB::Table")
    assert len(tables) >= 4
    for props in (t["Properties"] for t in tables.values()):
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    test_stack = LocalTemplate(parameters={"DeletionProtection": "false"})
    for lid, table in tables.items():
        assert LocalTemplate().resolve(table["Properties"])["DeletionProtectionEnabled"] is True
        assert test_stack.resolve(table["Properties"])["DeletionProtectionEnabled"] is False, lid


def test_every_bucket_refuses_requests_without_tls_and_blocks_public_access():
    resources = SOURCE["Resources"]
    policies = {
        p["Properties"]["Bucket"]["Ref"]: p["Properties"]["PolicyDocument"]["Statement"]
        for p in _of_type(resources, "AWS::S3::BucketPolicy").values()
    }
    for lid, bucket in _of_type(resources, "AWS::S3::Bucket").items():
        block = bucket["Properties"]["PublicAccessBlockConfiguration"]
        assert set(block.values()) == {True} and len(block) == 4, lid
        denies = [
            s
            for s in policies[lid]
            if s["Effect"] == "Deny"
            and s["Principal"] == "*"
            and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        ]
        assert len(denies) == 1, lid
        assert denies[0]["Resource"] == [
            {"Fn::GetAtt": [lid, "Arn"]},
            {"Fn::Sub": "${" + lid + ".Arn}/*"},
        ]


def _log_groups(resources: dict) -> dict[str, dict]:
    return _of_type(resources, "AWS::Logs::LogGroup")


def test_every_function_writes_to_a_log_group_with_retention_named_as_lambda_names_it(transformed):
    resources = transformed["Resources"]
    groups = {
        json.dumps(g["Properties"]["LogGroupName"]): g for g in _log_groups(resources).values()
    }
    functions = _of_type(resources, "AWS::Lambda::Function")
    assert len(functions) >= 14
    for lid, function in functions.items():
        by_ref = json.dumps({"Fn::Sub": "/aws/lambda/${" + lid + "}"})
        name = function["Properties"].get("FunctionName")  # a fixed name may be spelled out
        by_name = json.dumps({"Fn::Sub": "/aws/lambda/" + name["Fn::Sub"]}) if isinstance(
            name, dict) and "Fn::Sub" in name else by_ref  # fmt: skip
        group = groups.get(by_ref) or groups[by_name]
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        assert group.get("Condition") == function.get("Condition"), lid
    assert transformed["Parameters"]["LogRetentionDays"]["Default"] == 30


def test_every_state_machine_logs_to_a_retained_log_group_and_traces_by_the_switch(transformed):
    resources = transformed["Resources"]
    machines = _of_type(resources, "AWS::StepFunctions::StateMachine")
    assert {m["Properties"].get("StateMachineType", "STANDARD") for m in machines.values()} == {
        "STANDARD",
        "EXPRESS",
    }
    for lid, machine in machines.items():
        logging = machine["Properties"]["LoggingConfiguration"]
        assert logging["Level"] == {"Ref": "StateMachineLogLevel"}
        assert logging["IncludeExecutionData"] is False
        (destination,) = logging["Destinations"]
        group = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
        assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        assert machine["Properties"]["TracingConfiguration"] == {
            "Enabled": {"Fn::If": ["TracingOn", True, False]}
        }, lid
        role = resources[machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
        actions = {
            action
            for policy in role["ManagedPolicyArns"]
            for statement in resources[policy["Ref"]]["Properties"]["PolicyDocument"]["Statement"]
            for action in statement["Action"]
        }
        assert {"logs:CreateLogDelivery", "xray:PutTraceSegments"} <= actions, lid


def test_every_function_traces_by_the_switch(transformed):
    for lid, function in _of_type(transformed["Resources"], "AWS::Lambda::Function").items():
        assert function["Properties"]["TracingConfig"] == {
            "Mode": {"Fn::If": ["TracingOn", "Active", "PassThrough"]}
        }, lid
    assert SOURCE["Conditions"]["TracingOn"] == {"Fn::Equals": [{"Ref": "TracingEnabled"}, "true"]}


@pytest.mark.parametrize(
    "stage, required",
    [
        ("HttpApiApiGatewayDefaultStage", {"requestId", "routeKey", "status", "integrationError"}),
        ("NotifyStage", {"requestId", "routeKey", "status", "integrationError", "connectionId"}),
    ],
)
def test_both_apis_write_json_access_logs_and_throttle_their_routes(transformed, stage, required):
    resources = transformed["Resources"]
    props = resources[stage]["Properties"]
    logs = props["AccessLogSettings"]
    if "Fn::If" in logs:  # the WebSocket stage's: off only with ApiGatewayLoggingRole none
        condition, logs, off = logs["Fn::If"]
        assert (condition, off) == ("NotifyAccessLogsOn", {"Ref": "AWS::NoValue"})
    record = json.loads(logs["Format"])
    assert required <= set(record)
    assert all(re.fullmatch(r"\$context\.[A-Za-z.]+", v) for v in record.values())
    group = logs["DestinationArn"]["Fn::GetAtt"][0]
    assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    assert props["DefaultRouteSettings"] == {
        "ThrottlingBurstLimit": {"Ref": "ApiThrottlingBurstLimit"},
        "ThrottlingRateLimit": {"Ref": "ApiThrottlingRateLimit"},
    }


def test_the_websocket_stage_logs_through_the_account_role_the_stack_sets_unless_told_otherwise():
    resources = SOURCE["Resources"]
    assert SOURCE["Parameters"]["ApiGatewayLoggingRole"]["Default"] == "create"
    for value, creates, logs in [
        ("create", True, True),
        ("existing", False, True),
        ("none", False, False),
    ]:
        template = LocalTemplate(parameters={"ApiGatewayLoggingRole": value})
        assert template.resolver.condition("CreateApiGatewayLoggingRole") is creates, value
        assert template.resolver.condition("NotifyAccessLogsOn") is logs, value
    assert "AccessLogSettings" not in LocalTemplate(
        parameters={"ApiGatewayLoggingRole": "none"}
    ).resolve({"AccessLogSettings": resources["NotifyStage"]["Properties"]["AccessLogSettings"]})
    account = resources["ApiGatewayAccount"]
    assert account["Condition"] == "CreateApiGatewayLoggingRole"
    assert account["Properties"]["CloudWatchRoleArn"] == {
        "Fn::GetAtt": ["ApiGatewayLoggingRoleForAccount", "Arn"]
    }
    # the stage waits for the account setting (through a handle: DependsOn cannot name it)
    assert "ApiGatewayLoggingReady" in resources["NotifyStage"]["DependsOn"]
    assert resources["ApiGatewayLoggingReady"]["Metadata"]["Account"]["Fn::If"][:2] == [
        "CreateApiGatewayLoggingRole",
        {"Ref": "ApiGatewayAccount"},
    ]


def test_the_http_api_access_log_has_the_latency():
    record = json.loads(SOURCE["Globals"]["HttpApi"]["AccessLogSettings"]["Format"])
    assert record["latencyMs"] == "$context.responseLatency"


def test_the_websocket_stage_deploys_itself_after_every_route_and_has_no_frozen_deployment():
    resources = SOURCE["Resources"]
    stage = resources["NotifyStage"]
    assert stage["Properties"]["AutoDeploy"] is True
    assert "DeploymentId" not in stage["Properties"]
    assert not _of_type(resources, "AWS::ApiGatewayV2::Deployment")
    routes = {
        lid
        for lid, r in resources.items()
        if r["Type"] in ("AWS::ApiGatewayV2::Route", "AWS::ApiGatewayV2::RouteResponse")
    }
    assert routes and routes <= set(stage["DependsOn"])


def test_the_apis_functions_give_up_before_the_api_does_and_the_long_poll_fits():
    template = LocalTemplate()
    routed = {route.function for route in template.routes} | {"DataPlaneFunction"}
    assert "ProduceFunction" in routed
    for lid in routed:
        assert template.functions[lid].timeout_s < API_INTEGRATION_LIMIT_S, lid
    receive = template.functions["ReceiveFunction"]
    assert int(receive.environment["RECEIVE_MAX_WAIT_MS"]) + 5000 <= receive.timeout_s * 1000


def test_the_scheduler_and_glue_roles_trust_their_service_only_for_this_account():
    services = {"scheduler.amazonaws.com", "glue.amazonaws.com", "states.amazonaws.com"}
    trusted = {}
    for lid, role in _of_type(SOURCE["Resources"], "AWS::IAM::Role").items():
        for statement in role["Properties"]["AssumeRolePolicyDocument"]["Statement"]:
            if statement["Principal"].get("Service") in services:
                trusted[lid] = statement.get("Condition")
    machines = {f"{m}Role" for m in _of_type(SOURCE["Resources"], "AWS::Serverless::StateMachine")}
    assert set(trusted) >= {"JobSchedulerRole", "GlueJobRole", "IngestScheduleRole"} | machines
    assert len(machines) == 3
    for lid, condition in trusted.items():
        assert condition == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}, lid


def test_the_ingest_schedule_runs_as_the_role_that_trusts_only_this_account(transformed):
    resources = transformed["Resources"]
    schedule = resources["IngestFunctionTick"]["Properties"]["Target"]
    assert schedule["RoleArn"] == {"Fn::GetAtt": ["IngestScheduleRole", "Arn"]}
    assert "IngestFunctionTickRole" not in resources  # SAM made none of its own


def test_every_glue_job_runs_with_a_security_configuration_encrypting_everything():
    resources = SOURCE["Resources"]
    jobs = _of_type(resources, "AWS::Glue::Job")
    assert len(jobs) == 3
    for lid, job in jobs.items():
        config = resources[job["Properties"]["SecurityConfiguration"]["Ref"]]["Properties"]
        encryption = config["EncryptionConfiguration"]
        assert encryption["S3Encryptions"] == [{"S3EncryptionMode": "SSE-S3"}], lid
        assert encryption["CloudWatchEncryption"]["CloudWatchEncryptionMode"] == "SSE-KMS"
        assert encryption["JobBookmarksEncryption"]["JobBookmarksEncryptionMode"] == "CSE-KMS"


@pytest.mark.parametrize(
    "parameter, function, default",
    [
        ("TriggerFanoutReservedConcurrency", "TriggerFanoutFunction", 10),
        ("NotifyReservedConcurrency", "NotifyFunction", 20),
        ("ProduceReservedConcurrency", "ProduceFunction", None),
    ],
)
def test_reserved_concurrency_is_a_parameter_and_minus_one_reserves_none(
    parameter, function, default
):
    reserved = {
        "Reserved": SOURCE["Resources"][function]["Properties"]["ReservedConcurrentExecutions"]
    }
    assert LocalTemplate().resolve(reserved).get("Reserved") == default
    assert LocalTemplate(parameters={parameter: "7"}).resolve(reserved) == {"Reserved": "7"}
    assert LocalTemplate(parameters={parameter: "-1"}).resolve(reserved) == {}


def test_every_dead_letter_queue_has_a_depth_alarm():
    resources = SOURCE["Resources"]
    alarmed = {
        dims["QueueName"]["Fn::GetAtt"][0]
        for _, dims in _alarmed(resources, "AWS/SQS", "ApproximateNumberOfMessagesVisible")
    }
    assert alarmed == set(_of_type(resources, "AWS::SQS::Queue")) != set()


def test_every_function_has_an_alarm_on_its_errors_and_throttles(transformed):
    resources = transformed["Resources"]
    functions = _of_type(resources, "AWS::Lambda::Function")
    for metric in ("Errors", "Throttles"):
        alarms = _alarmed(resources, "AWS/Lambda", metric)
        assert {dims["FunctionName"]["Ref"] for _, dims in alarms} == set(functions), metric
        for alarm, dims in alarms:
            assert alarm.get("Condition") == functions[dims["FunctionName"]["Ref"]].get("Condition")


def test_every_table_has_a_throttle_alarm_and_the_stream_fanout_an_iterator_age_alarm():
    resources = SOURCE["Resources"]
    tables = set(_of_type(resources, "AWS::DynamoDB::Table"))
    for metric in ("ReadThrottleEvents", "WriteThrottleEvents"):
        alarmed = {
            dims["TableName"]["Ref"] for _, dims in _alarmed(resources, "AWS/DynamoDB", metric)
        }
        assert alarmed == tables, metric
    streamed = {
        lid
        for lid, r in _of_type(resources, "AWS::Serverless::Function").items()
        if any(e["Type"] == "DynamoDB" for e in (r["Properties"].get("Events") or {}).values())
    }
    ages = _alarmed(resources, "AWS/Lambda", "IteratorAge")
    assert (
        {dims["FunctionName"]["Ref"] for _, dims in ages} == streamed == {"TriggerFanoutFunction"}
    )
    assert ages[0][0]["Properties"]["Threshold"] == {"Ref": "StreamIteratorAgeAlarmMs"}


def test_every_state_machine_has_an_alarm_on_failed_and_timed_out_executions():
    resources = SOURCE["Resources"]
    machines = set(_of_type(resources, "AWS::Serverless::StateMachine"))
    for metric in ("ExecutionsFailed", "ExecutionsTimedOut"):
        alarmed = {
            dims["StateMachineArn"]["Ref"] for _, dims in _alarmed(resources, "AWS/States", metric)
        }
        assert alarmed == machines, metric


def test_failed_or_timed_out_glue_runs_of_every_job_reach_the_alarm_topic():
    resources = SOURCE["Resources"]
    (rule,) = _of_type(resources, "AWS::Events::Rule").values()
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["source"] == ["aws.glue"] and pattern["detail-type"] == ["Glue Job State Change"]
    assert {"FAILED", "TIMEOUT"} <= set(pattern["detail"]["state"])
    jobs = {ref["Ref"] for ref in pattern["detail"]["jobName"]}
    assert jobs == set(_of_type(resources, "AWS::Glue::Job"))
    assert [target["Arn"] for target in rule["Properties"]["Targets"]] == [TOPIC]


def test_every_alarm_notifies_the_alarm_topic_which_is_made_when_none_is_given():
    resources = SOURCE["Resources"]
    alarms = _of_type(resources, "AWS::CloudWatch::Alarm")
    assert len(alarms) >= 2 + 15 + 1 + 4 + 3
    for lid, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [TOPIC], lid
    assert SOURCE["Parameters"]["AlarmTopicArn"]["Default"] == ""
    assert resources["AlarmTopic"]["Condition"] == "CreateAlarmTopic"
    assert SOURCE["Outputs"]["AlarmTopicArn"]["Value"] == TOPIC
    assert LocalTemplate().resolver.condition("CreateAlarmTopic") is True
    given = "arn:aws:sns:us-east-1:123456789012:pager"
    assert LocalTemplate(parameters={"AlarmTopicArn": given}).resolve(TOPIC) == given


def test_every_checkov_skip_says_why():
    lines = (ROOT / ".checkov.yaml").read_text().splitlines()
    start = lines.index("skip-check:")
    skips = [i for i in range(start + 1, len(lines)) if lines[i].strip().startswith("- CKV")]
    assert skips
    for i in skips:
        assert lines[i - 1].strip().startswith("#"), lines[i]
