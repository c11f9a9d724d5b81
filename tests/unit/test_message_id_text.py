"""Message id text form shared by the SDK and the service."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from magnetar_wire.ids import format_message_id, parse_message_id


def test_a_non_batched_id_formats_with_minus_one_defaults():
    assert format_message_id(1, 0) == "1:0:-1:-1"


def test_a_batched_partitioned_id_formats_all_four_parts():
    assert format_message_id(3, 17, 2, 5) == "3:17:2:5"


def test_four_parts_parse_to_a_tuple():
    assert parse_message_id("1:0:-1:0") == (1, 0, -1, 0)


def test_missing_partition_and_batch_default_to_minus_one():
    assert parse_message_id("7:9") == (7, 9, -1, -1)
    assert parse_message_id("7:9:3") == (7, 9, 3, -1)


def test_pulsar_earliest_parses():
    assert parse_message_id("-1:-1:-1:-1") == (-1, -1, -1, -1)


@given(
    st.integers(min_value=-1, max_value=2**63 - 1),
    st.integers(min_value=-1, max_value=2**63 - 1),
    st.integers(min_value=-1, max_value=10_000),
    st.integers(min_value=-1, max_value=10_000),
)
def test_format_then_parse_round_trips(ledger, entry, partition, batch):
    text = format_message_id(ledger, entry, partition, batch)
    assert parse_message_id(text) == (ledger, entry, partition, batch)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty message id"),
        ("1", "1 part(s)"),
        ("1:2:3:4:5", "5 part(s)"),
        ("a:0", "ledger_id 'a' is not an integer"),
        ("1:x:-1:-1", "entry_id 'x' is not an integer"),
        ("1:0:-1:", "batch_index '' is not an integer"),
        ("1:0: 2", "partition ' 2' is not an integer"),
        ("1:+0", "entry_id '+0' is not an integer"),
        ("1:1_0", "entry_id '1_0' is not an integer"),
        ("1.5:0", "ledger_id '1.5' is not an integer"),
        ("1:0:-2", "partition must be >= -1"),
    ],
)
def test_malformed_text_raises_a_value_error_that_says_what_is_wrong(text, fragment):
    with pytest.raises(ValueError) as info:
        parse_message_id(text)
    assert fragment in str(info.value)
    if text:
        assert repr(text) in str(info.value)
    assert "ledger:entry[:partition[:batch]]" in str(info.value) or "must be >= -1" in str(
        info.value
    )


def test_parsing_a_non_string_raises_type_error():
    with pytest.raises(TypeError):
        parse_message_id(b"1:0")  # type: ignore[arg-type]


def test_formatting_rejects_parts_below_minus_one_and_non_ints():
    with pytest.raises(ValueError, match="batch_index must be >= -1"):
        format_message_id(1, 0, -1, -2)
    with pytest.raises(TypeError, match="entry_id must be an int"):
        format_message_id(1, "0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="partition must be an int"):
        format_message_id(1, 0, True)
