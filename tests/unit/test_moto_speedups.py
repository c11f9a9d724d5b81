"""The emulator's cheaper paths through moto (``magnetar_local.moto_boot``) answer exactly as
moto's own: DynamoDB attribute values serialized directly, action names listed once per
class, Batch's models loaded only when used; its process imports none of the stack's
gateway, handlers and engine."""

from __future__ import annotations

import json
import subprocess
import sys
from enum import StrEnum

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from moto.core.responses import XFormedAttributePicker
from moto.core.serialize import BaseJSONSerializer, JSONSerializer
from moto.core.utils import get_service_model

from magnetar_local import moto_boot

ORIGINAL = BaseJSONSerializer._serialize_type_structure
ORIGINAL = getattr(ORIGINAL, "__wrapped__", ORIGINAL)


class Colour(StrEnum):
    RED = "red"


names = st.text(max_size=6)
numbers = st.integers(-(10**6), 10**6).map(str)
blobs = st.binary(max_size=8) | st.text(max_size=6)  # moto holds B as bytes; a str too
leaves = st.one_of(
    names.map(lambda s: {"S": s}),
    numbers.map(lambda n: {"N": n}),
    blobs.map(lambda b: {"B": b}),
    st.lists(names, max_size=3).map(lambda v: {"SS": v}),
    st.lists(numbers, max_size=3).map(lambda v: {"NS": v}),
    st.lists(blobs, max_size=3).map(lambda v: {"BS": v}),
    st.just({"NULL": True}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({}),
)
# values moto's own serializer must still handle: not plain attribute values
unusual = st.one_of(
    st.integers().map(lambda n: {"N": n}),
    st.just({"S": Colour.RED}),
    st.just({"S": {}}),
    st.just({"SS": ("a", "b")}),
    st.just({"X": "y"}),
    st.just({"S": "a", "N": "1", "BOOL": False}),
    st.just({"L": "not a list"}),
)
values = st.recursive(
    leaves | unusual,
    lambda inner: st.one_of(
        st.dictionaries(names, inner | st.none(), max_size=3).map(lambda m: {"M": m}),
        st.lists(inner | st.none(), max_size=3).map(lambda v: {"L": v}),
    ),
    max_leaves=12,
)
# attribute names are never empty (DynamoDB refuses them; moto would inline such a value)
items = st.dictionaries(st.text(min_size=1, max_size=6), values, max_size=4)


def serialized(operation: str, result: dict) -> str | type[Exception]:
    """moto's answer body for ``result`` of ``operation``, as its DynamoHandler makes it
    (or the type of the error serializing it raised)."""
    model = get_service_model("dynamodb").operation_model(operation)
    serializer = JSONSerializer(
        model, value_picker=XFormedAttributePicker(response_transformers=None)
    )
    try:
        return serializer.serialize(result)["body"]
    except Exception as exc:  # noqa: BLE001 - both paths must fail alike
        return type(exc)


@pytest.fixture
def both_ways(monkeypatch: pytest.MonkeyPatch):
    """A function answering ``(moto's own body, the direct serializer's body)``."""
    monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_structure", ORIGINAL)

    def answer(operation: str, result: dict) -> tuple[object, object]:
        monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_structure", ORIGINAL)
        own = serialized(operation, result)
        moto_boot.serialize_attribute_values_directly()
        moto_boot.serialize_attribute_values_directly()  # idempotent: not wrapped twice
        assert BaseJSONSerializer._serialize_type_structure.__wrapped__ is ORIGINAL
        return own, serialized(operation, result)

    return answer


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # both_ways resets per call
)
@given(item=items, page=st.lists(items, max_size=4))
def test_dynamodb_answers_serialize_exactly_as_moto_serializes_them(both_ways, item, page):
    own, direct = both_ways("GetItem", {"Item": item})
    assert direct == own
    if isinstance(own, str):
        assert json.loads(own)["Item"].keys() == item.keys()
    own, direct = both_ways("Query", {"Items": page, "Count": len(page), "ScannedCount": 9})
    assert direct == own


def test_a_binary_attribute_comes_in_base64_and_members_in_the_models_order(both_ways):
    item = {"k": {"BOOL": True, "S": "x"}, "b": {"B": b"\x00\xff"}, "l": {"L": [None, {"N": "1"}]}}
    own, direct = both_ways("GetItem", {"Item": item})
    assert direct == own
    assert json.loads(direct) == {
        "Item": {"k": {"S": "x", "BOOL": True}, "b": {"B": "AP8="}, "l": {"L": [None, {"N": "1"}]}}
    }
    assert direct.index('"S"') < direct.index('"BOOL"')


def test_unusual_values_are_left_to_motos_serializer():
    for value in ({"N": 1}, {"S": "a", "X": 1}, {"SS": ("a",)}, {"M": [1]}, [], None):
        with pytest.raises(moto_boot._Unusual):
            moto_boot.attribute_value_json(value, str)


def test_a_classes_action_names_are_listed_once_and_are_motos(monkeypatch):
    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler

    original = getattr(responses.method_names_from_class, "__wrapped__", None)
    original = original or responses.method_names_from_class
    monkeypatch.setattr(responses, "method_names_from_class", original)
    moto_boot.cache_action_names()
    moto_boot.cache_action_names()
    cached = responses.method_names_from_class
    assert cached.__wrapped__ is original
    assert cached(DynamoHandler) == original(DynamoHandler)
    assert "get_item" in cached(DynamoHandler)
    assert cached(DynamoHandler) is cached(DynamoHandler)  # listed once


def test_step_functions_load_without_batch_models_and_batch_still_answers():
    script = """
import sys
from magnetar_local import moto_boot
moto_boot.defer_batch_models()
moto_boot.defer_batch_models()
import moto.server
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
print("ec2" if "moto.ec2" in sys.modules else "no ec2")
from moto.batch import batch_backends
from moto.backends import get_backend
print(type(batch_backends).__name__, get_backend("batch") is batch_backends)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[:2] == ["no ec2", "BackendDict True"]


def test_the_emulators_process_imports_none_of_the_stack_which_still_loads_by_name():
    script = """
import sys
from magnetar_local.moto_boot import main
print(sorted(m for m in ("boto3", "magnetar_core.engine", "magnetar_local.stack") if m in sys.modules))
import magnetar_local
print(magnetar_local.LocalStack.__module__, magnetar_local.StackError.__module__)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[:2] == ["[]", "magnetar_local.stack magnetar_local.readiness"]
