"""template.yaml's table capacity: on-demand by default; with TableBillingMode=PROVISIONED every
table starts at the minimum capacity and Application Auto Scaling tracks its read and write
utilization (docs/deploying.md, "Table capacity")."""

from __future__ import annotations

import pytest
from sam_translation import transformed

from magnetar_local.cfn import load_yaml
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

SHARED_FIXTURES = (transformed,)  # the SAM translation, made once a run (sam_translation)
SOURCE = load_yaml(DEFAULT_TEMPLATE)
PROVISIONED = {"TableBillingMode": "PROVISIONED", "ProvisionedReadCapacityMin": "3",
               "ProvisionedWriteCapacityMin": "5"}  # fmt: skip
METRIC = {"Read": "DynamoDBReadCapacityUtilization", "Write": "DynamoDBWriteCapacityUtilization"}


def _of_type(resources: dict, kind: str) -> dict[str, dict]:
    return {lid: r for lid, r in resources.items() if r["Type"] == kind}


def _scaled_things(resources: dict) -> set[tuple[str, str | None, str]]:
    """(table, index or None, Read/Write) for every table and global secondary index."""
    found = set()
    for lid, table in _of_type(resources, "AWS::DynamoDB::Table").items():
        indexes = [
            None,
            *(i["IndexName"] for i in table["Properties"].get("GlobalSecondaryIndexes", [])),
        ]
        found |= {(lid, index, dim) for index in indexes for dim in ("Read", "Write")}
    return found


def test_tables_are_on_demand_by_default_and_start_at_the_minimum_capacity_when_provisioned():
    tables = _of_type(SOURCE["Resources"], "AWS::DynamoDB::Table")
    assert len(tables) >= 4
    on_demand, provisioned = LocalTemplate(), LocalTemplate(parameters=PROVISIONED)
    assert not on_demand.resolver.condition("ProvisionedTables")
    assert provisioned.resolver.condition("ProvisionedTables")
    for lid, table in tables.items():
        default = on_demand.resolve(table["Properties"])
        assert default["BillingMode"] == "PAY_PER_REQUEST", lid
        assert "ProvisionedThroughput" not in default, lid
        chosen = provisioned.resolve(table["Properties"])
        assert chosen["BillingMode"] == "PROVISIONED", lid
        assert chosen["ProvisionedThroughput"] == {
            "ReadCapacityUnits": "3",
            "WriteCapacityUnits": "5",
        }, lid


def test_the_local_stack_creates_its_tables_on_demand_by_default():
    assert {spec.create_kwargs["BillingMode"] for spec in LocalTemplate().tables} == {
        "PAY_PER_REQUEST"
    }


def test_every_table_and_index_has_a_read_and_a_write_target_only_under_the_condition(transformed):
    resources = transformed["Resources"]
    targets = _of_type(resources, "AWS::ApplicationAutoScaling::ScalableTarget")
    covered = set()
    for lid, target in targets.items():
        assert target["Condition"] == "ProvisionedTables", lid
        props = target["Properties"]
        assert props["ServiceNamespace"] == "dynamodb"
        kind, dimension = props["ScalableDimension"].removeprefix("dynamodb:").split(":")
        dim = dimension.removesuffix("CapacityUnits")
        assert props["MinCapacity"] == {"Ref": f"Provisioned{dim}CapacityMin"}, lid
        assert props["MaxCapacity"] == {"Ref": f"Provisioned{dim}CapacityMax"}, lid
        template = props["ResourceId"]["Fn::Sub"]
        table = template.removeprefix("table/${").split("}")[0]
        index = template.split("/index/")[1] if kind == "index" else None
        covered.add((table, index, dim))
    assert covered == _scaled_things(resources)
    assert len(targets) == len(covered)  # one target each, no duplicate


def test_each_target_has_one_target_tracking_policy_on_its_own_utilization_metric(transformed):
    resources = transformed["Resources"]
    targets = _of_type(resources, "AWS::ApplicationAutoScaling::ScalableTarget")
    policies = _of_type(resources, "AWS::ApplicationAutoScaling::ScalingPolicy")
    tracked = {}
    for lid, policy in policies.items():
        assert policy["Condition"] == "ProvisionedTables", lid
        props = policy["Properties"]
        assert props["PolicyType"] == "TargetTrackingScaling"
        config = props["TargetTrackingScalingPolicyConfiguration"]
        assert config["TargetValue"] == {"Ref": "ProvisionedTargetUtilization"}
        target = props["ScalingTargetId"]["Ref"]
        dim = targets[target]["Properties"]["ScalableDimension"].split(":")[-1]
        assert config["PredefinedMetricSpecification"]["PredefinedMetricType"] == METRIC[
            dim.removesuffix("CapacityUnits")], lid  # fmt: skip
        tracked[target] = tracked.get(target, 0) + 1
    assert tracked == dict.fromkeys(targets, 1)


@pytest.mark.parametrize("name", ["ProvisionedReadCapacityMin", "ProvisionedWriteCapacityMax"])
def test_capacity_parameters_refuse_less_than_one_unit(name):
    assert SOURCE["Parameters"][name]["MinValue"] == 1


def test_the_target_utilization_stays_where_target_tracking_can_work():
    spec = SOURCE["Parameters"]["ProvisionedTargetUtilization"]
    assert (spec["MinValue"], spec["Default"], spec["MaxValue"]) == (20, 70, 90)
    assert SOURCE["Parameters"]["TableBillingMode"]["AllowedValues"] == [
        "PAY_PER_REQUEST",
        "PROVISIONED",
    ]
    assert SOURCE["Parameters"]["TableBillingMode"]["Default"] == "PAY_PER_REQUEST"
