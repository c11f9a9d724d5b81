"""The local stack's template loader: short tags, intrinsic functions, routes, matching."""

from __future__ import annotations

import textwrap

import pytest

from magnetar_local.cfn import Resolver, TemplateError, load_yaml
from magnetar_local.routes import RouteTable
from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import LocalTemplate, RouteSpec, kebab

SMALL = textwrap.dedent("""
    Parameters:
      Stage: {Type: String, Default: dev}
    Conditions:
      IsProd: !Equals [!Ref Stage, prod]
    Globals:
      Function:
        Timeout: 7
        Environment:
          Variables:
            TABLE: !Ref Things
            STAGE: !Ref Stage
    Resources:
      Things:
        Type: AWS::DynamoDB::Table
        Properties:
          TableName: !Sub "${AWS::StackName}-things"
          BillingMode: PAY_PER_REQUEST
          AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
          KeySchema: [{AttributeName: pk, KeyType: HASH}]
      Blobs:
        Type: AWS::S3::Bucket
      Timer:
        Type: AWS::Serverless::StateMachine
        Properties:
          Definition:
            StartAt: Go
            States: {Go: {Type: Pass, Result: "${Table}", End: true}}
          DefinitionSubstitutions: {Table: !GetAtt Things.Arn}
      Fn:
        Type: AWS::Serverless::Function
        Properties:
          CodeUri: functions/fn/
          Handler: app.lambda_handler
          MemorySize: !If [IsProd, 1024, 256]
          Environment:
            Variables:
              STAGE: override
              BUCKET_ARN: !GetAtt [Blobs, Arn]
              JOINED: !Join ["/", [!Ref AWS::Region, !Select [1, !Split [",", "a,b,c"]]]]
              LITERAL: !Sub "${!NotResolved}-${Name}"
              OPTIONAL: !If [IsProd, "yes", !Ref AWS::NoValue]
          Events:
            One: {Type: HttpApi, Properties: {Path: "/things/{id}", Method: get}}
            Two: {Type: HttpApi}
            Other: {Type: Schedule, Properties: {Schedule: rate(1 minute)}}
""").replace("${Name}", "${AWS::AccountId}")


@pytest.fixture
def small(tmp_path) -> LocalTemplate:
    path = tmp_path / "template.yaml"
    path.write_text(SMALL)
    return LocalTemplate(path, stack_name="st", region="eu-west-1", account_id="111122223333")


def test_short_tags_load_as_their_long_forms():
    document = load_yaml(
        "a: !Ref X\nb: !GetAtt T.Arn\nc: !Sub 'x'\nd: !If [C, 1, 2]\ne: !Condition C\n"
    )
    assert document == {
        "a": {"Ref": "X"},
        "b": {"Fn::GetAtt": ["T", "Arn"]},
        "c": {"Fn::Sub": "x"},
        "d": {"Fn::If": ["C", 1, 2]},
        "e": {"Condition": "C"},
    }


def test_sub_resolves_pseudo_parameters_resource_attributes_variables_and_escapes():
    resolver = Resolver({"AWS::StackName": "s", "T": "s-t"}, {("T", "Arn"): "arn:t"})
    assert (
        resolver.resolve({"Fn::Sub": "${AWS::StackName}/${T}/${T.Arn}/${!Keep}"})
        == "s/s-t/arn:t/${Keep}"
    )
    assert resolver.resolve({"Fn::Sub": ["${A}-${T}", {"A": "x"}]}) == "x-s-t"


def test_an_unknown_reference_is_a_clear_template_error():
    with pytest.raises(TemplateError, match="Missing"):
        Resolver({}, {}).resolve({"Ref": "Missing"})


def test_names_follow_the_template_or_the_stack_and_kebab_case_logical_id(small):
    assert small.tables[0].name == "st-things"
    assert small.buckets[0].name == "st-blobs"
    assert (
        small.state_machines[0].arn == "arn:aws:states:eu-west-1:111122223333:stateMachine:st-timer"
    )
    assert kebab("EntriesBucket") == "entries-bucket"


def test_table_specs_carry_create_table_arguments(small):
    assert small.tables[0].create_kwargs == {
        "TableName": "st-things",
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    }


def test_definition_substitutions_are_applied_to_state_machine_definitions(small):
    assert (
        '"arn:aws:dynamodb:eu-west-1:111122223333:table/st-things"'
        in small.state_machines[0].definition
    )


def test_function_environment_is_globals_overridden_by_the_function(small):
    function = small.functions["Fn"]
    assert function.environment == {
        "TABLE": "st-things",
        "STAGE": "override",
        "BUCKET_ARN": "arn:aws:s3:::st-blobs",
        "JOINED": "eu-west-1/b",
        "LITERAL": "${NotResolved}-111122223333",
    }
    assert (function.timeout_s, function.memory_mb) == (7, 256)
    assert function.code_dir == small.root / "functions" / "fn"


def test_only_http_api_events_become_routes_and_a_pathless_one_is_the_default_route(small):
    assert [r.route_key for r in small.routes] == ["GET /things/{id}", "$default"]


def test_the_real_template_yields_every_documented_route_the_admin_ones_through_one_greedy_route():
    template = LocalTemplate()
    admin = [r for r in template.routes if r.function == "AdminFunction"]
    assert [r.route_key for r in admin] == ["ANY /admin/{proxy+}"]  # one Lambda permission
    routes = {(r.method, r.path): r.function for r in default_served_routes()}
    consumer = "/v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers"
    topic = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}"
    assert (
        routes[("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages")] == "ProduceFunction"
    )
    assert routes[("POST", consumer + "/{consumerId}/receive")] == "ReceiveFunction"
    assert routes[("POST", consumer + "/{consumerId}/redeliver")] == "NackFunction"
    assert routes[("DELETE", consumer + "/{consumerId}")] == "ConsumersFunction"
    assert routes[("GET", "/admin/v2/brokers/health")] == "AdminFunction"
    assert routes[("DELETE", topic + "/subscription/{subscription}")] == "AdminFunction"
    assert routes[("GET", "/admin/v2/tenants")] == "TenancyFunction"
    assert routes[("POST", topic + "/permissions/{role}")] == "TenancyFunction"
    assert routes[("PUT", topic + "/triggers/{name}")] == "AdminFunction"
    assert routes[("POST", topic + "/subscription/{subscription}/skip/{numMessages}")] == "AdminFunction"  # fmt: skip
    assert routes[("POST", topic + "/terminate")] == "AdminFunction"
    assert routes[("GET", "/console/{proxy+}")] == "ConsoleFunction"
    assert len(routes) == 155  # HTTP routes only: the notification channel's are WebSocket


def test_the_notification_channel_function_and_table_load_for_the_local_stack():
    template = LocalTemplate()
    notify = template.functions["NotifyFunction"]
    assert (notify.code_dir / "app.py").is_file() and notify.timeout_s == 10
    assert notify.environment["NOTIFY_TABLE"] == "magnetar-notify"
    assert "NotifyFunction" not in {r.function for r in template.routes}
    tables = {t.name: t for t in template.tables}
    assert tables["magnetar-notify"].ttl_attribute == "expiresAt"


def _table(*keys: str) -> RouteTable:
    return RouteTable(
        RouteSpec(*key.split(" ", 1), f"F{i}")
        if key != "$default"
        else RouteSpec("ANY", "$default", f"F{i}")
        for i, key in enumerate(keys)
    )


def test_a_specific_route_beats_the_greedy_admin_route_which_takes_every_other_admin_path():
    table = RouteTable(LocalTemplate().routes)
    tenants = table.match("GET", "/admin/v2/tenants/acme")
    assert tenants.route.function == "TenancyFunction" and tenants.path_parameters == {
        "tenant": "acme"
    }
    health = table.match("GET", "/admin/v2/brokers/health")
    assert health.route.route_key == "ANY /admin/{proxy+}"
    assert health.path_parameters == {"proxy": "v2/brokers/health"}
    # a method the tenancy route has not: the admin app answers (its 404 NotFound)
    assert table.match("PATCH", "/admin/v2/tenants/acme").route.function == "AdminFunction"
    assert table.match("GET", "/administrator") is None  # no $default route: API Gateway's 404


def test_literal_segments_beat_parameters_whatever_the_declaration_order():
    table = RouteTable(default_served_routes())
    health = table.match("GET", "/admin/v2/brokers/health")
    assert health.route.path == "/admin/v2/brokers/health" and health.path_parameters == {}
    listing = table.match("GET", "/admin/v2/persistent/public/default")
    assert listing.route.path == "/admin/v2/{domain}/{tenant}/{namespace}"
    assert listing.path_parameters == {
        "domain": "persistent",
        "tenant": "public",
        "namespace": "default",
    }


def test_precedence_is_literal_then_parameter_then_greedy_then_any_method_then_default():
    table = _table("GET /a/{greedy+}", "GET /a/{x}", "ANY /a/b", "GET /a/b", "$default")
    assert table.match("GET", "/a/b").route.route_key == "GET /a/b"
    assert table.match("POST", "/a/b").route.route_key == "ANY /a/b"
    assert table.match("GET", "/a/c").route.route_key == "GET /a/{x}"
    deep = table.match("GET", "/a/c/d%20e")
    assert deep.route.route_key == "GET /a/{greedy+}" and deep.path_parameters == {
        "greedy": "c/d e"
    }
    assert table.match("DELETE", "/zzz").route.route_key == "$default"


def test_no_match_without_a_default_route_and_methods_must_agree():
    table = _table("GET /a/{x}")
    assert table.match("POST", "/a/b") is None
    assert table.match("GET", "/a") is None
    assert table.match("GET", "/a/b/c") is None


def test_path_parameters_are_url_decoded_per_segment():
    match = _table("GET /t/{name}/x").match("GET", "/t/my%20topic%2Fpart/x")
    assert match.path_parameters == {"name": "my topic/part"}


def test_the_gateway_tells_its_observers_the_admin_route_a_greedy_request_took():
    from magnetar_local.events import HttpRequest
    from magnetar_local.gateway import Gateway

    template = LocalTemplate()
    gateway = Gateway(template.routes, template.functions)
    path = "/admin/v2/persistent/acme/orders/t%3A1/triggers/to-billing"
    request = HttpRequest("PUT", path, "", [], b"")
    match = gateway.table.match("PUT", path)
    assert match.route.route_key == "ANY /admin/{proxy+}"
    observed = gateway._served_match(request, match)  # what the trigger driver sees
    assert observed.route.route_key == "PUT /admin/v2/{domain}/{tenant}/{namespace}/{topic}/triggers/{name}"  # fmt: skip
    assert observed.path_parameters == {"domain": "persistent", "tenant": "acme", "namespace": "orders",
                                        "topic": "t:1", "name": "to-billing"}  # fmt: skip
    produce = gateway.table.match("POST", "/v1/persistent/acme/orders/t/messages")
    assert gateway._served_match(HttpRequest("POST", "/v1/persistent/acme/orders/t/messages", "", [], b""), produce) is produce  # fmt: skip
    unknown = gateway.table.match("GET", "/admin/v9")
    assert gateway._served_match(HttpRequest("GET", "/admin/v9", "", [], b""), unknown) is unknown
