"""The trigger filter grammar: each pattern kind, AND across fields, OR within one, and
invalid patterns refused with the field named."""

from __future__ import annotations

import pytest

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.triggers.filters import MessageFilter


def matches(pattern: dict, key: str | None = None, **properties: str) -> bool:
    parsed = MessageFilter.parse(pattern)
    assert parsed is not None
    return parsed.matches(key, properties)


def test_exact_and_prefix_on_the_key_match_as_alternatives():
    pattern = {"key": ["a", {"prefix": "ord-"}]}
    assert matches(pattern, "a") and matches(pattern, "ord-7")
    assert not matches(pattern, "b") and not matches(pattern, None)


def test_anything_but_never_matches_a_missing_value():
    pattern = {"properties": {"kind": [{"anything-but": ["test", "debug"]}]}}
    assert matches(pattern, kind="live")
    assert not matches(pattern, kind="test") and not matches(pattern)


def test_exists_false_matches_only_a_missing_value():
    assert matches({"properties": {"x": [{"exists": False}]}})
    assert not matches({"properties": {"x": [{"exists": False}]}}, x="1")
    assert matches({"properties": {"x": [{"exists": True}]}}, x="")


def test_numeric_ranges_read_the_value_as_a_number():
    pattern = {"properties": {"amount": [{"numeric": [">", 10, "<=", 100]}]}}
    assert matches(pattern, amount="10.5") and matches(pattern, amount="100")
    assert not matches(pattern, amount="10") and not matches(pattern, amount="abc")
    assert not matches(pattern, amount="nan")


def test_every_field_named_must_match():
    pattern = {"key": [{"prefix": "k"}], "properties": {"a": ["1"], "b": [{"exists": True}]}}
    assert matches(pattern, "k1", a="1", b="x")
    assert not matches(pattern, "k1", a="1") and not matches(pattern, "z", a="1", b="x")


def test_an_absent_filter_is_none():
    assert MessageFilter.parse(None) is None


@pytest.mark.parametrize(
    ("pattern", "field"),
    [
        ([], "filter"),
        ({"keys": ["a"]}, "filter"),
        ({"key": []}, "filter.key"),
        ({"key": [1]}, "filter.key"),
        ({"key": [{"prefix": 1}]}, "filter.key"),
        ({"key": [{"suffix": "a"}]}, "filter.key"),
        ({"key": [{"prefix": "a", "exists": True}]}, "filter.key"),
        ({"properties": {"n": [{"numeric": ["~", 1]}]}}, "filter.properties.n"),
        ({"properties": {"n": [{"numeric": [">", "1"]}]}}, "filter.properties.n"),
        ({"properties": {"n": [{"numeric": [">"]}]}}, "filter.properties.n"),
        ({"properties": {"n": [{"exists": "yes"}]}}, "filter.properties.n"),
        ({"properties": {"n": [{"anything-but": []}]}}, "filter.properties.n"),
        ({"properties": ["n"]}, "filter.properties"),
    ],
)
def test_invalid_patterns_are_refused_naming_the_field(pattern, field):
    with pytest.raises(InvalidMessage, match=f"'{field}'"):
        MessageFilter.parse(pattern)
