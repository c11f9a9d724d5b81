"""template.yaml as SAM translates it, for the template's tests: ``sam_transform`` (as ``sam
deploy`` after ``sam package``, AWS::LanguageExtensions first), the ``transformed`` fixture (one
translation a run, shared by the xdist workers), ``yaml_parse`` (SAM's parse, with libyaml),
cfn-lint's errors, and a role's inline policies and allowed actions.

SAM's translator (with boto3) is imported where a translation runs, not when the test modules
are imported: every xdist worker imports every test module to collect the suite (measured:
about 0.5 CPU-s a worker)."""

from __future__ import annotations

import copy
import fcntl
import json
import os

import pytest
import yaml
from samtranslator.yaml_helper import intrinsics_multi_constructor

from magnetar_local.cfn import Resolver
from magnetar_local.template import DEFAULT_TEMPLATE

ROOT = DEFAULT_TEMPLATE.parent


class _SamLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's parser when built) with the short tags as SAM reads them."""


_SamLoader.add_multi_constructor("!", intrinsics_multi_constructor)


def yaml_parse(text: str) -> dict:
    """``samtranslator.yaml_helper.yaml_parse``: the same constructors (safe ones, ``!Ref``,
    ``!GetAtt A.b`` ... as SAM turns them into long forms), on libyaml's parser, which parses
    template.yaml for a seventh of the CPU of the pure-Python one SAM's function uses."""
    return yaml.load(text, Loader=_SamLoader)  # noqa: S506 - a safe loader


def lint_errors(matches):
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


def sam_transform(document: dict, parameters: dict[str, str] | None = None) -> dict:
    """Transform like `sam deploy` does after `sam package` (local URIs become s3:// URIs),
    AWS::LanguageExtensions first (``language_extensions``, for ``parameters``)."""
    document = language_extensions(document, parameters)
    for resource in document["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://magnetar-artifacts/{properties[key].rstrip('/')}"
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

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
            document = sam_transform(yaml_parse(DEFAULT_TEMPLATE.read_text()))
            path.write_text(json.dumps(document))
    return json.loads(path.read_text())


def inline_policies(transformed: dict, role: str) -> list[dict]:
    """The role's inline policies; a conditional one (``Fn::If``) as when its condition holds."""
    listed = transformed["Resources"][role]["Properties"].get("Policies", [])
    return [p["Fn::If"][1] if "Fn::If" in p else p for p in listed]


def allowed_actions(transformed: dict, role: str) -> set[str]:
    actions: set[str] = set()
    for policy in inline_policies(transformed, role):
        for statement in policy["PolicyDocument"]["Statement"]:
            listed = statement["Action"]
            actions.update([listed] if isinstance(listed, str) else listed)
    return actions
