"""A trigger's message filter: EventBridge-pattern style on the key and the properties, pure.

Grammar (a JSON object; every field named must match, AND; within a field's list, any
pattern matches, OR)::

    {"key": [<pattern>, ...], "properties": {"<name>": [<pattern>, ...], ...}}

A pattern is a string (exact match) or one of the objects ``{"prefix": "ord-"}``,
``{"anything-but": "x"}`` / ``{"anything-but": ["x", "y"]}``, ``{"exists": true|false}``
and ``{"numeric": [">", 0, "<=", 100]}`` (one or two comparisons, the value read as a
number; a value that is not a number never matches). A missing key or property matches
only ``{"exists": false}`` (as EventBridge: anything-but does not match a missing field).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from magnetar_core.domain.errors import InvalidMessage, MagnetarError

MAX_PATTERNS = 100
"""Patterns per field, and property names per filter."""
_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip

Pattern = Callable[[str | None], bool]


def _bad(where: str, why: str) -> MagnetarError:
    return InvalidMessage(f"Field '{where}' is not a valid filter pattern: {why}")


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _numeric(spec: object, where: str) -> Pattern:
    if not isinstance(spec, list) or len(spec) not in (2, 4):
        raise _bad(where, "numeric takes [op, number] or [op, number, op, number]")
    checks: list[tuple[Callable[[float, float], bool], float]] = []
    for op, bound in zip(spec[::2], spec[1::2], strict=True):
        if op not in _COMPARISONS:
            raise _bad(where, f"numeric operator must be one of {', '.join(_COMPARISONS)}")
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            raise _bad(where, "numeric bounds must be numbers")
        checks.append((_COMPARISONS[op], float(bound)))

    def match(value: str | None) -> bool:
        number = _number(value) if value is not None else None
        return number is not None and all(check(number, bound) for check, bound in checks)

    return match


def _anything_but(spec: object, where: str) -> Pattern:
    values = spec if isinstance(spec, list) else [spec]
    if not values or not all(isinstance(v, str) for v in values):
        raise _bad(where, "anything-but takes a string or a non-empty list of strings")
    excluded = frozenset(values)
    return lambda value: value is not None and value not in excluded


def _pattern(raw: object, where: str) -> Pattern:
    if isinstance(raw, str):
        return lambda value: value == raw
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise _bad(where, "a pattern is a string or an object with exactly one of "
                   "prefix, anything-but, exists, numeric")  # fmt: skip
    ((kind, spec),) = raw.items()
    if kind == "prefix":
        if not isinstance(spec, str):
            raise _bad(where, "prefix takes a string")
        return lambda value: value is not None and value.startswith(spec)
    if kind == "exists":
        if not isinstance(spec, bool):
            raise _bad(where, "exists takes true or false")
        return lambda value: (value is not None) == spec
    if kind == "anything-but":
        return _anything_but(spec, where)
    if kind == "numeric":
        return _numeric(spec, where)
    raise _bad(where, f"unknown pattern {kind!r}: use prefix, anything-but, exists or numeric")


def _patterns(raw: object, where: str) -> tuple[Pattern, ...]:
    if not isinstance(raw, list) or not raw or len(raw) > MAX_PATTERNS:
        raise _bad(where, f"it must be a list of 1 to {MAX_PATTERNS} patterns")
    return tuple(_pattern(p, where) for p in raw)


@dataclass(frozen=True)
class MessageFilter:
    """Which messages a trigger delivers (``matches``); the rest are acknowledged unsent.
    ``source`` is the JSON it was parsed from (what the admin API shows back)."""

    source: Mapping[str, object]
    key: tuple[Pattern, ...] | None = field(compare=False)
    properties: Mapping[str, tuple[Pattern, ...]] = field(compare=False)

    @classmethod
    def parse(cls, raw: object, where: str = "filter") -> MessageFilter | None:
        """The filter of a trigger body (None when absent or null). Raises InvalidMessage
        naming the field (``filter.key``, ``filter.properties.<name>``) for a bad one."""
        if raw is None:
            return None
        if not isinstance(raw, Mapping) or set(raw) - {"key", "properties"}:
            raise _bad(where, "it must be an object of key and properties")
        key = _patterns(raw["key"], f"{where}.key") if "key" in raw else None
        props_raw = raw.get("properties", {})
        if not isinstance(props_raw, Mapping) or len(props_raw) > MAX_PATTERNS:
            raise _bad(f"{where}.properties", f"it must be an object of at most {MAX_PATTERNS} names")  # fmt: skip
        properties = {
            name: _patterns(patterns, f"{where}.properties.{name}")
            for name, patterns in props_raw.items()
        }
        return cls(dict(raw), key, properties)

    def matches(self, key: str | None, properties: Mapping[str, str]) -> bool:
        """Whether a message with this key and these properties is delivered."""
        if self.key is not None and not any(p(key) for p in self.key):
            return False
        return all(
            any(p(properties.get(name)) for p in patterns)
            for name, patterns in self.properties.items()
        )
