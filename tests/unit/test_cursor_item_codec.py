"""DynamoDB item codecs: cursor_to_item / cursor_from_item and IndexEntry.to_item / from_item."""

import json

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.state import EXCLUSIVE, SHARED, ConsumerInfo, CursorState
from magnetar_core.domain.log import IndexEntry, log_key
from magnetar_core.domain.rangeset import RangeSet


def busy_cursor():
    return CursorState(
        subscription="sub-1",
        sub_type=SHARED,
        mark_delete=4,
        read_position=20,
        acked=RangeSet([(6, 7), (10, 10)]),
        batch_acks={8: {0, 2}, 12: {1}},
        batch_sizes={8: 3, 12: 5},
        redeliver=RangeSet([(5, 5), (9, 9)]),
        leases={"c1": RangeSet([(8, 8), (11, 12)]), "c2": RangeSet([(13, 19)])},
        redelivery_counts={5: 1, 9: 3},
        consumers={
            "c1": ConsumerInfo("c1", "alpha", 1000, 2000),
            "c2": ConsumerInfo("c2", "beta", 1500, 2500),
        },
        version=7,
    )


def test_a_cursor_survives_the_item_round_trip_with_its_version_bumped_by_one():
    state = busy_cursor()
    back = cursor_from_item(cursor_to_item("t-partition-0|1", state))
    assert back.version == 8
    back.version = 7
    assert back == state


def test_the_cursor_item_exposes_scalars_as_top_level_attributes():
    item = cursor_to_item("pk-1", busy_cursor())
    assert {k: v for k, v in item.items() if k != "st"} == {
        "pk": {"S": "pk-1"},
        "sub": {"S": "sub-1"},
        "ver": {"N": "8"},
        "type": {"S": "Shared"},
        "md": {"N": "4"},
        "rp": {"N": "20"},
        "nc": {"N": "2"},
        "dur": {"BOOL": True},
    }
    body = json.loads(item["st"]["S"])
    assert body["acked"] == [6, 1, 3, 0]  # 6..7, then 3 past 7: 10..10
    assert body["backs"] == {"8": [0, 2], "12": [1]}
    assert body["leases"] == {"c1": [8, 0, 3, 1], "c2": [13, 6]}
    assert body["consumers"]["c2"] == {"name": "beta", "since": 1500, "seen": 2500}


def test_a_cursor_item_written_with_start_end_pairs_is_still_read():
    item = cursor_to_item("pk-1", busy_cursor())
    body = json.loads(item["st"]["S"])
    body["acked"], body["redeliver"] = [[6, 7], [10, 10]], [[5, 5], [9, 9]]
    body["leases"] = {"c1": [[8, 8], [11, 12]], "c2": [[13, 19]]}
    item["st"] = {"S": json.dumps(body)}

    back = cursor_from_item(item)
    back.version = 7
    assert back == busy_cursor()


def test_a_fresh_cursor_round_trips_at_version_one():
    state = CursorState.new("s", EXCLUSIVE, last_entry_id=41, earliest=False)
    item = cursor_to_item("pk", state)
    assert item["ver"] == {"N": "1"}
    back = cursor_from_item(item)
    assert (back.mark_delete, back.read_position, back.sub_type) == (41, 42, EXCLUSIVE)
    assert (back.acked, back.redeliver, back.leases, back.consumers) == (
        RangeSet(),
        RangeSet(),
        {},
        {},
    )
    assert (back.batch_acks, back.batch_sizes, back.redelivery_counts) == ({}, {}, {})


def test_a_round_tripped_cursor_keeps_integer_keys_and_set_values():
    back = cursor_from_item(cursor_to_item("pk", busy_cursor()))
    assert back.batch_acks == {8: {0, 2}, 12: {1}}
    assert all(isinstance(k, int) for k in back.batch_sizes)
    assert all(isinstance(k, int) for k in back.redelivery_counts)
    assert back.consumers["c1"] == ConsumerInfo("c1", "alpha", 1000, 2000)


ENTRY = IndexEntry(
    entry_id=17,
    object_key="seg/abc.bin",
    offset=4096,
    length=321,
    count=5,
    batched=True,
    publish_min_ms=1_763_700_000_000,
    publish_max_ms=1_763_700_000_009,
    producer="prod-1",
    sequence_min=100,
    sequence_max=104,
)


def test_an_index_entry_survives_the_item_round_trip():
    item = ENTRY.to_item("t|1")
    assert item["pk"] == {"S": "t|1"}
    assert item["eid"] == {"N": "17"}
    assert item["b"] == {"BOOL": True}
    assert "fence" not in item
    assert IndexEntry.from_item(item) == ENTRY


def test_a_fence_item_round_trips_with_its_fence_flag():
    fence = IndexEntry.fence_at(30)
    item = fence.to_item("t|1")
    assert item["fence"] == {"BOOL": True}
    back = IndexEntry.from_item(item)
    assert back == fence
    assert (back.entry_id, back.fence, back.count, back.object_key) == (30, True, 0, "")


def test_a_projected_index_item_reads_missing_attributes_as_defaults():
    back = IndexEntry.from_item({"eid": {"N": "3"}, "n": {"N": "2"}})
    assert back == IndexEntry(3, "", 0, 0, 2, False, 0, 0, "", 0, 0, fence=False)


def test_log_key_joins_the_partition_topic_and_ledger_with_a_bar():
    assert log_key("persistent://a/b/t-partition-2", 9) == "persistent://a/b/t-partition-2|9"
