"""Reading openapi.yaml for its tests: the document parsed (libyaml's loader when there),
its operations, local ``$ref`` resolution, an operation's error statuses and query
parameters."""

from __future__ import annotations

from typing import Any

import yaml

from magnetar_local.template import DEFAULT_TEMPLATE

OPENAPI = DEFAULT_TEMPLATE.parent / "openapi.yaml"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
ERROR_REF = "#/components/schemas/Error"
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it: the same document in an eighth of the CPU
(openapi.yaml is 220 kB: about 1 CPU-s with the pure-Python loader)."""


def load_openapi() -> dict[str, Any]:
    """openapi.yaml, parsed as ``yaml.safe_load`` does."""
    return yaml.load(OPENAPI.read_text(), Loader=SAFE_LOADER)  # noqa: S506 - a safe loader


def operations(document: dict[str, Any]):
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item, item[method]


def resolve(document: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"only local references: {ref}"
        target: Any = document
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
    return node


def operation_at(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    return document["paths"][path][method]


def error_statuses(document: dict[str, Any], operation: dict[str, Any]) -> set[str]:
    """Statuses (and "default") whose JSON body is the Error schema."""
    statuses = set()
    for status, response in operation["responses"].items():
        content = resolve(document, response).get("content") or {}
        schema = (content.get("application/json") or {}).get("schema") or {}
        if schema.get("$ref") == ERROR_REF:
            statuses.add(str(status))
    return statuses


def query_parameters(document: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    parameters = (resolve(document, p) for p in operation.get("parameters", []))
    return {p["name"]: p for p in parameters if p["in"] == "query"}
