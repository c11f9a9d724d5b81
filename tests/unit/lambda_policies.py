"""Each function's resource-based policy as Lambda stores it once CloudFormation has created
every ``AWS::Lambda::Permission`` of a SAM-transformed template, and its size against
Lambda's limit (20,480 bytes: beyond it, creating the permission fails with "The final
policy size (...) is bigger than the limit (20480)" and the stack rolls back).

Lambda keeps one statement per permission in a compact JSON document (``GetPolicy``):
``{"Version":"2012-10-17","Id":"default","Statement":[{"Sid":...,"Effect":"Allow",
"Principal":...,"Action":...,"Resource":<function ARN>,"Condition":...}]}``. The names are
made as CloudFormation makes them, long: the statement id ``<stack>-<logical id>-<13
characters>``, the function name ``<stack>-<logical id>-<13 characters>`` (cut at 64), in a
region with a long name. Every permission counts, whatever its condition (the worst case:
``FrontDoor: FunctionUrl`` adds the function URL's).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

LIMIT_BYTES = 20_480
"""Lambda's quota on a function's resource-based policy."""
STACK = "magnetar-production"
REGION = "ap-southeast-2"
ACCOUNT = "123456789012"
API_ID = "a1b2c3d4e5"  # API Gateway ids are 10 characters
SUFFIX = "ABCDEFGHIJKLM"  # CloudFormation's random suffix: 13 characters


def function_name(logical_id: str) -> str:
    """The name CloudFormation gives a function the template does not name."""
    return f"{STACK}-{logical_id}-{SUFFIX}"[:64]


def _resolve(value: Any, functions: set[str], local: dict[str, str] | None = None) -> Any:
    """``value`` with Ref, Fn::GetAtt (Arn) and Fn::Sub evaluated for this module's stack."""
    refs = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT,
            "AWS::StackName": STACK, "AWS::URLSuffix": "amazonaws.com", **(local or {})}  # fmt: skip

    def ref(name: str) -> str:
        if name in refs:
            return refs[name]
        if name in functions:
            return function_name(name)
        return API_ID  # an API, a stage: ids of their own length

    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        (key, argument), = value.items()  # fmt: skip
        if key == "Ref":
            return ref(argument)
        if key == "Fn::GetAtt":
            name = argument[0] if isinstance(argument, list) else argument.split(".")[0]
            return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{ref(name)}"
        if key == "Fn::Sub":
            text, variables = (argument, {}) if isinstance(argument, str) else argument
            bound = {k: _resolve(v, functions, local) for k, v in variables.items()}
            return re.sub(r"\$\{([^}!]+)\}", lambda m: str(bound.get(m.group(1)) or _resolve(
                {"Fn::GetAtt": m.group(1).split(".")} if "." in m.group(1) else {"Ref": m.group(1)},
                functions, local)), text)  # fmt: skip
    raise ValueError(f"cannot resolve {value!r}")


def statement(logical_id: str, properties: dict[str, Any], functions: set[str]) -> dict[str, Any]:
    """The statement Lambda stores for one ``AWS::Lambda::Permission``."""
    principal = properties["Principal"]
    if principal != "*":
        principal = ({"Service": principal} if principal.endswith(".amazonaws.com")
                     else {"AWS": f"arn:aws:iam::{principal}:root"})  # fmt: skip
    target = _resolve(properties["FunctionName"], functions)
    if not target.startswith("arn:"):
        target = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{target}"
    condition: dict[str, dict[str, str]] = {}
    if "SourceArn" in properties:
        condition.setdefault("ArnLike", {})["AWS:SourceArn"] = _resolve(properties["SourceArn"], functions)  # fmt: skip
    if "SourceAccount" in properties:
        condition.setdefault("StringEquals", {})["AWS:SourceAccount"] = _resolve(properties["SourceAccount"], functions)  # fmt: skip
    if "FunctionUrlAuthType" in properties:
        condition.setdefault("StringEquals", {})["lambda:FunctionUrlAuthType"] = properties["FunctionUrlAuthType"]  # fmt: skip
    if "InvokedViaFunctionUrl" in properties:
        condition.setdefault("Bool", {})["lambda:InvokedViaFunctionUrl"] = str(properties["InvokedViaFunctionUrl"]).lower()  # fmt: skip
    found = {"Sid": f"{STACK}-{logical_id}-{SUFFIX}", "Effect": "Allow", "Principal": principal,
             "Action": properties["Action"], "Resource": target}  # fmt: skip
    if condition:
        found["Condition"] = condition
    return found


def _target(properties: dict[str, Any]) -> str:
    name = properties["FunctionName"]
    if isinstance(name, dict) and "Ref" in name:
        return name["Ref"]
    if isinstance(name, dict) and "Fn::GetAtt" in name:
        return name["Fn::GetAtt"][0]
    raise ValueError(f"a permission on {name!r}: only Ref or Fn::GetAtt of a function")


def resource_policies(transformed: dict[str, Any]) -> dict[str, str]:
    """Function logical id -> its resource-based policy (compact JSON, as Lambda stores it)."""
    resources = transformed["Resources"]
    functions = {lid for lid, r in resources.items() if r["Type"] == "AWS::Lambda::Function"}
    statements: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for logical_id, resource in resources.items():
        if resource["Type"] == "AWS::Lambda::Permission":
            properties = resource["Properties"]
            statements[_target(properties)].append(statement(logical_id, properties, functions))
    return {
        function: json.dumps(
            {"Version": "2012-10-17", "Id": "default", "Statement": found}, separators=(",", ":")
        )  # fmt: skip
        for function, found in statements.items()
    }


def policy_sizes_bytes(transformed: dict[str, Any]) -> dict[str, int]:
    """Function logical id -> the size of its resource-based policy in bytes."""
    return {lid: len(policy.encode()) for lid, policy in resource_policies(transformed).items()}


if __name__ == "__main__":  # `python tests/unit/lambda_policies.py`: the sizes of template.yaml
    from sam_translation import sam_transform, yaml_parse

    from magnetar_local.template import DEFAULT_TEMPLATE

    sizes = policy_sizes_bytes(sam_transform(yaml_parse(DEFAULT_TEMPLATE.read_text())))
    for logical_id, size in sorted(sizes.items(), key=lambda item: -item[1]):
        print(f"{logical_id:28} {size:6} bytes ({size / LIMIT_BYTES:.0%} of {LIMIT_BYTES})")
