"""template.yaml with ``FrontDoor: FunctionUrl``: cfn-lint passes (the whole template is
linted with the default ``HttpApi`` in test_template.py), and SAM makes the function URL,
its two public-invoke permissions and the ``DataPlaneUrl`` output, all only under that
value."""

from __future__ import annotations

import json
import re

import yaml
from sam_translation import lint_errors, sam_transform, yaml_parse

from magnetar_local.template import DEFAULT_TEMPLATE

FRONT_DOOR = (
    "DataPlaneFunction",
    "DataPlaneUrl",
    "DataPlaneUrlPermission",
    "DataPlaneUrlInvokePermission",
)


def _front_door_template(front_door: str) -> dict:
    """The template's front-door resources, with every resource they refer to (transitively)
    and ``FrontDoor`` defaulting to ``front_door``: linting it costs a fraction of the whole."""
    document = yaml_parse(DEFAULT_TEMPLATE.read_text())
    resources = document["Resources"]
    wanted, queue = set(), [*FRONT_DOOR, "CoreLayer"]  # CoreLayer: the Globals' layer
    while queue:
        logical_id = queue.pop()
        if logical_id in wanted:
            continue
        wanted.add(logical_id)
        text = json.dumps(resources[logical_id])
        queue += [name for name in resources if re.search(rf"\b{name}\b", text)]
    document["Resources"] = {k: v for k, v in resources.items() if k in wanted}
    document["Outputs"] = {"DataPlaneUrl": document["Outputs"]["DataPlaneUrl"]}
    document["Parameters"]["FrontDoor"]["Default"] = front_door
    return document


def test_cfn_lint_passes_the_front_door_with_function_url_and_catches_a_broken_url():
    from cfnlint.api import lint

    document = _front_door_template("FunctionUrl")
    assert lint_errors(lint(yaml.safe_dump(document), regions=["us-east-1"])) == []
    url = document["Resources"]["DataPlaneUrl"]["Properties"]
    broken = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"DataPlaneUrl": {
        "Type": "AWS::Lambda::Url", "Properties": {**url, "TargetFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:f",
                                                   "AuthType": "OPEN"}}}}  # fmt: skip
    errors = lint_errors(lint(yaml.safe_dump(broken), regions=["us-east-1"]))
    assert len(errors) == 1 and "'OPEN' is not one of" in errors[0]


def test_sam_makes_a_public_function_url_to_the_data_plane_only_under_function_url():
    transformed = sam_transform(_front_door_template("FunctionUrl"))
    resources, conditions = transformed["Resources"], transformed["Conditions"]
    url = resources["DataPlaneUrl"]
    assert url["Type"] == "AWS::Lambda::Url" and url["Condition"] == "UseFunctionUrl"
    assert url["Properties"]["AuthType"] == "NONE"  # tokens are checked inside the function
    assert url["Properties"]["TargetFunctionArn"] == {"Fn::GetAtt": ["DataPlaneFunction", "Arn"]}
    # a public URL made since October 2025 answers 403 unless the function's policy allows
    # both actions: InvokeFunctionUrl, and InvokeFunction through the URL only
    permissions = {lid: r for lid, r in resources.items() if r["Type"] == "AWS::Lambda::Permission"}
    assert {r["Properties"]["Action"] for r in permissions.values()} == {
        "lambda:InvokeFunctionUrl", "lambda:InvokeFunction"}  # fmt: skip
    for permission in permissions.values():
        assert permission["Condition"] == "UseFunctionUrl"
        properties = permission["Properties"]
        assert properties["FunctionName"] == {"Ref": "DataPlaneFunction"}
        assert properties["Principal"] == "*"
        if properties["Action"] == "lambda:InvokeFunctionUrl":
            assert properties["FunctionUrlAuthType"] == "NONE"
        else:  # never a public InvokeFunction of the function itself
            assert properties["InvokedViaFunctionUrl"] is True
    assert conditions["UseFunctionUrl"] == {"Fn::Equals": [{"Ref": "FrontDoor"}, "FunctionUrl"]}
    assert transformed["Outputs"]["DataPlaneUrl"]["Condition"] == "UseFunctionUrl"
    assert transformed["Parameters"]["FrontDoor"]["AllowedValues"] == ["HttpApi", "FunctionUrl"]
    whole = yaml_parse(DEFAULT_TEMPLATE.read_text())
    assert whole["Parameters"]["FrontDoor"]["Default"] == "HttpApi"
