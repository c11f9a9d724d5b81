"""Sticky key hashing: Murmur3 32-bit like Pulsar, reduced into 0..65535."""

import mmh3
import pytest
from hypothesis import given
from hypothesis import strategies as st

from magnetar_core.domain.keyshared import (
    NONE_KEY,
    ConsumerAssignError,
    hash_of,
    murmur3_32,
    new_selector,
    selector_from_dict,
    sticky_key,
    sticky_key_hash,
)
from magnetar_core.domain.keyshared.hashing import merge_adjacent


def test_the_seed_example_key_hashes_to_6067():
    assert mmh3.hash(b"Order-3459134", 0, signed=False) == 3112179635
    assert sticky_key_hash("Order-3459134") == 6067


def test_murmur3_32_clears_the_sign_bit_like_pulsars_murmur3_32hash():
    assert murmur3_32(b"Order-3459134") == 3112179635 & 0x7FFFFFFF == 964695987


@given(st.binary(max_size=64))
def test_clearing_the_sign_bit_never_changes_the_hash_modulo_65536(data):
    assert hash_of(data) == mmh3.hash(data, 0, signed=False) % 65536
    assert 0 <= hash_of(data) <= 65535


def test_the_ordering_key_wins_over_the_key():
    assert sticky_key("k", b"ok") == b"ok"
    assert sticky_key_hash("k", b"ok") == hash_of(b"ok")


def test_an_empty_ordering_key_is_still_set_and_wins():
    assert sticky_key("k", b"") == b""


def test_a_key_is_hashed_as_its_utf8_bytes():
    assert sticky_key("clé") == "clé".encode()
    assert sticky_key_hash("clé") == hash_of("clé".encode())


def test_keyless_messages_all_share_the_none_key_hash():
    assert NONE_KEY == b"NONE_KEY"
    assert sticky_key(None) == b"NONE_KEY"
    assert sticky_key_hash(None) == sticky_key_hash(None, None) == hash_of(b"NONE_KEY")


def test_merge_adjacent_sorts_and_joins_touching_ranges_only():
    assert merge_adjacent([(5, 9), (0, 4), (11, 12)]) == [(0, 9), (11, 12)]


def test_new_selector_picks_the_selector_for_the_mode_and_broker_setting():
    assert new_selector("AUTO_SPLIT").mode == "auto_split"
    assert new_selector("auto_split", use_consistent_hashing=True).mode == "consistent_hashing"
    assert new_selector("STICKY").mode == "sticky"


def test_new_selector_refuses_an_unknown_mode_naming_the_valid_ones():
    with pytest.raises(ConsumerAssignError, match="use AUTO_SPLIT or STICKY"):
        new_selector("ROUND_ROBIN")


def test_selector_from_dict_rebuilds_each_kind_and_refuses_an_unknown_mode():
    for sel in (new_selector("AUTO_SPLIT"), new_selector("AUTO_SPLIT", True)):
        sel.add("c1", "n1")
        assert selector_from_dict(sel.to_dict()).ranges() == sel.ranges()
    sticky = new_selector("STICKY")
    sticky.add("c1", "n1", [(0, 9)])
    assert selector_from_dict(sticky.to_dict()).ranges() == {"c1": [(0, 9)]}
    with pytest.raises(ValueError, match="unknown Key_Shared selector state mode 'x'"):
        selector_from_dict({"m": "x"})


@pytest.mark.parametrize("bad", [-1, 65536, True, 1.0])
def test_every_selector_refuses_a_hash_outside_0_to_65535(bad):
    for sel in (
        new_selector("AUTO_SPLIT"),
        new_selector("AUTO_SPLIT", True),
        new_selector("STICKY"),
    ):
        with pytest.raises(ValueError, match="sticky key hash must be an int in 0..65535"):
            sel.select(bad)
