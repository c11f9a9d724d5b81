"""The Functions API as Pulsar's (``import magnetar as pulsar; class F(pulsar.Function)``),
IdentitySerDe's conversions, and the sequence ids outputs are published with."""

from __future__ import annotations

import sys

import pytest

import magnetar as pulsar
from magnetar_core.domain.functions.sequence import producer_name, sequence_id
from magnetar_core.services.functions.context import FunctionContext
from magnetar_wire import serde


def test_a_pulsar_function_subclass_is_written_as_for_pulsar():
    class Exclaim(pulsar.Function):
        def process(self, input, context):
            return input + "!"

    assert Exclaim().process("hi", None) == "hi!"
    with pytest.raises(TypeError):
        pulsar.Function()  # process is abstract


def test_the_service_context_has_every_method_of_the_api_context():
    api = {n for n in vars(pulsar.Context) if not n.startswith("_")}
    assert api <= set(dir(FunctionContext))
    assert {"publish", "get_user_config_value", "get_logger", "get_message_id", "get_message_key",
            "get_message_properties", "get_current_message_topic_name", "incr_counter",
            "get_counter", "put_state", "get_state"} <= api  # fmt: skip


@pytest.mark.parametrize(
    ("payload", "value"),
    [
        (b"5", 5),
        (b"2.5", 2.5),
        (b"(1+2j)", 1 + 2j),
        (b"hello", "hello"),
        (b"\xff\x00", b"\xff\x00"),
    ],
)
def test_identity_serde_reads_numbers_then_text_then_bytes_and_writes_them_back(payload, value):
    assert serde.deserialize(payload) == value
    assert serde.serialize(value) == payload


def test_identity_serde_refuses_other_types_naming_them():
    with pytest.raises(TypeError, match="dict"):
        serde.serialize({"a": 1})


def test_sequence_ids_increase_with_the_position_in_a_ledger_and_refuse_out_of_bounds():
    ledger = 1_764_300_000_000_000  # epoch-ms based, as the service makes them
    ids = [f"{ledger}:{e}" for e in ("0:-1:-1", "0:-1:0", "0:-1:1", "1:-1:-1", "2:-1:-1")]
    sequences = [sequence_id(i) for i in ids]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(ids)
    assert sequence_id(f"{2**63 - 1}:{2**48 - 1}:3:16382") < 2**63
    with pytest.raises(ValueError, match="bounds"):
        sequence_id(f"1:{2**48}:-1:-1")


def test_each_ledger_and_each_output_of_an_input_partition_has_its_own_producer():
    topic, first = "persistent://t/n/in", "1764300000000000:5:-1:-1"
    names = {producer_name("t/n/f", topic, first), producer_name("t/n/f", topic, first, 0),
             producer_name("t/n/f", topic, "1764300000001000:5:-1:-1")}  # fmt: skip
    assert len(names) == 3
    assert producer_name("t/n/f", topic, first) == producer_name(
        "t/n/f", topic, "1764300000000000:9"
    )


def test_without_the_sdk_user_code_still_imports_magnetar_for_the_functions_api(monkeypatch):
    from magnetar_core.domain.functions.config import FunctionConfig
    from magnetar_core.services.functions.loader import Loader

    monkeypatch.setitem(sys.modules, "magnetar", None)  # `import magnetar` fails, as on Lambda
    code = "import magnetar as pulsar\nclass Up(pulsar.Function):\n    def process(self, i, c):\n        return i.upper()\n"  # fmt: skip
    config = FunctionConfig.parse("t", "n", "up", {"className": "up.Up", "code": code, "inputs": ["x"]})  # fmt: skip
    function = Loader().instance(config)
    assert function.process("hi", None) == "HI"
    assert not hasattr(sys.modules["magnetar"], "Client")  # the API alone
