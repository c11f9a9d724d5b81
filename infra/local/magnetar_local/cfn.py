"""CloudFormation YAML loading and intrinsic-function resolution for the local stack.

``load_yaml`` reads a template with the short tags (``!Ref``, ``!GetAtt``, ``!Sub``, ...)
turned into their long forms (``{"Ref": ...}``, ``{"Fn::GetAtt": [...]}``). ``Resolver``
evaluates the intrinsic functions the local stack needs against a fixed context (stack
name, region, account, parameter values and the local physical ids of resources).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

_FN_TAGS = (
    "And",
    "Base64",
    "Cidr",
    "Equals",
    "FindInMap",
    "GetAZs",
    "If",
    "ImportValue",
    "Join",
    "Length",
    "Not",
    "Or",
    "Select",
    "Split",
    "Sub",
    "ToJsonString",
    "Transform",
)


class TemplateError(ValueError):
    """A template construct the local stack cannot load or resolve."""


# libyaml's parser (PyYAML's C extension) when it is built: the same safe constructors, and a
# load of template.yaml 7 times cheaper than with the pure-Python scanner (measured: 0.19 ->
# 0.025 CPU-s; each local stack, the template's tests and every xdist worker's collection
# load it).
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CfnLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """A safe loader that understands CloudFormation's short-form tags."""


def _construct_node(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    raise TemplateError(f"cannot load the YAML node {node!r}")


def _tag_constructor(long_name: str) -> Callable[[yaml.SafeLoader, yaml.Node], Any]:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        return {long_name: _construct_node(loader, node)}

    return construct


def _get_att(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    value = _construct_node(loader, node)
    if isinstance(value, str):
        logical_id, _, attribute = value.partition(".")
        value = [logical_id, attribute]
    return {"Fn::GetAtt": value}


_CfnLoader.add_constructor("!Ref", _tag_constructor("Ref"))
_CfnLoader.add_constructor("!Condition", _tag_constructor("Condition"))
_CfnLoader.add_constructor("!GetAtt", _get_att)
for _name in _FN_TAGS:
    _CfnLoader.add_constructor(f"!{_name}", _tag_constructor(f"Fn::{_name}"))


def load_yaml(source: str | Path) -> dict[str, Any]:
    """Parse a CloudFormation template (a path or YAML/JSON text) into plain dicts.

    Raises TemplateError when the document is not a mapping.
    """
    text = Path(source).read_text() if isinstance(source, Path) else source
    document = yaml.load(text, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass
    if not isinstance(document, dict):
        raise TemplateError("a template must be a YAML mapping")
    return document


_SUB_VAR = re.compile(r"\$\{([^}]+)\}")


class Resolver:
    """Evaluates intrinsic functions.

    ``refs`` maps names usable in ``Ref`` (parameters, pseudo parameters, logical ids) to
    values; ``attributes`` maps ``(logical_id, attribute)`` to ``Fn::GetAtt`` values;
    ``conditions`` and ``mappings`` are the template's sections.
    """

    def __init__(
        self,
        refs: Mapping[str, Any],
        attributes: Mapping[tuple[str, str], Any],
        conditions: Mapping[str, Any] | None = None,
        mappings: Mapping[str, Any] | None = None,
    ) -> None:
        self.refs = dict(refs)
        self.attributes = dict(attributes)
        self.conditions = dict(conditions or {})
        self.mappings = dict(mappings or {})
        self._condition_values: dict[str, bool] = {}

    def resolve(self, value: Any) -> Any:
        """Return ``value`` with every intrinsic function evaluated (recursively).

        ``AWS::NoValue`` removes the enclosing key or list item. Raises TemplateError
        for unknown references or unsupported functions.
        """
        if isinstance(value, list):
            items = [self.resolve(item) for item in value]
            return [item for item in items if item is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return self._ref(argument)
            if key == "Condition" and isinstance(argument, str):
                return self.condition(argument)
            if key.startswith("Fn::"):
                return self._function(key[4:], argument)
        resolved = {key: self.resolve(item) for key, item in value.items()}
        return {key: item for key, item in resolved.items() if item is not _NO_VALUE}

    def condition(self, name: str) -> bool:
        """Evaluate the named template condition (cached). Raises TemplateError if unknown."""
        if name not in self._condition_values:
            if name not in self.conditions:
                raise TemplateError(f"unknown condition {name!r}")
            self._condition_values[name] = bool(self.resolve(self.conditions[name]))
        return self._condition_values[name]

    def _ref(self, name: Any) -> Any:
        if name == "AWS::NoValue":
            return _NO_VALUE
        if not isinstance(name, str) or name not in self.refs:
            raise TemplateError(f"cannot resolve Ref {name!r} locally")
        return self.refs[name]

    def _get_att(self, argument: Any) -> Any:
        logical_id, attribute = (self.resolve(part) for part in argument)
        try:
            return self.attributes[(logical_id, attribute)]
        except KeyError:
            raise TemplateError(f"cannot resolve GetAtt {logical_id}.{attribute} locally") from None

    def _sub(self, argument: Any) -> str:
        if isinstance(argument, list):
            text, variables = argument[0], self.resolve(argument[1])
        else:
            text, variables = argument, {}

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(variables[name])
            if name in self.refs:
                return str(self._ref(name))
            if "." in name:
                return str(self._get_att(name.split(".", 1)))
            raise TemplateError(f"cannot resolve ${{{name}}} in Fn::Sub locally")

        return _SUB_VAR.sub(replace, text)

    def _function(self, name: str, argument: Any) -> Any:  # noqa: C901 - a dispatch table
        if name == "GetAtt":
            return self._get_att(argument if isinstance(argument, list) else argument.split(".", 1))
        if name == "Sub":
            return self._sub(argument)
        if name == "If":
            condition, when_true, when_false = argument
            return self.resolve(when_true if self.condition(condition) else when_false)
        args = self.resolve(argument)
        if name == "Join":
            separator, items = args
            return separator.join(str(item) for item in items)
        if name == "Select":
            index, items = args
            return items[int(index)]
        if name == "Split":
            separator, text = args
            return text.split(separator)
        if name == "Equals":
            left, right = args
            return str(left) == str(right)
        if name == "Not":
            return not args[0]
        if name == "And":
            return all(args)
        if name == "Or":
            return any(args)
        if name == "FindInMap":
            mapping, key, attribute = args[:3]
            return self.mappings[mapping][key][attribute]
        if name == "Base64":
            return base64.b64encode(str(args).encode()).decode()
        if name == "GetAZs":
            region = args or self.refs.get("AWS::Region", "us-east-1")
            return [f"{region}{zone}" for zone in "abc"]
        if name == "ToJsonString":
            return json.dumps(args, separators=(",", ":"))
        if name == "Length":
            return len(args)
        raise TemplateError(f"Fn::{name} is not supported by the local stack")


class _NoValue:
    """Marker for ``Ref: AWS::NoValue`` (the enclosing property is dropped)."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


_NO_VALUE = _NoValue()
