"""The chaos model's ``partition_consistent`` invariant: a message delivered or read back on a
partition its producer never sends to, or away from its confirmed position, is reported."""

from __future__ import annotations

from magnetar_chaos.model import Model


def checked(model: Model) -> dict:
    return model.check({"sub-shared": "Shared"}, None, None)["partition_consistent"]


def test_deliveries_and_read_backs_where_the_producer_sent_them_hold():
    model = Model(partitions=4)
    model.sent("3:7", "k", (3, 1, 0, 7))
    model.delivered("sub-shared", "3:7", "k", (3, 1, 0, 7), 0)
    model.read_back("3:7", (3, 1, 0, 7), 3)
    model.sent("1:0", "k", (1, -1, -1, -1))  # confirmed as a duplicate: no position
    model.delivered("sub-shared", "1:0", "k", (1, 1, 4, 0), 0)
    assert checked(model) == {"ok": True, "count": 0, "violations": []}


def test_a_batch_delivered_and_read_back_under_another_partition_is_reported():
    model = Model(partitions=4)
    model.sent("0:2360", "k", (0, 1, 47, 0))
    model.delivered("sub-shared", "0:2360", "k", (3, 1, 47, 0), 0)  # same entry, partition 3
    model.read_back("0:2360", (3, 1, 47, 0), 3)
    model.read_back("2:5", (2, 1, 1, 5), 1)  # the reader of partition 1 got partition 2's
    result = checked(model)
    assert not result["ok"] and result["count"] == 3
    assert result["violations"][0] == (
        "sub-shared: 0:2360 at (3, 1, 47, 0), sent to partition 0 (confirmed at (0, 1, 47, 0))"
    )
    assert result["violations"][2].endswith("by the reader of partition 1")


def test_a_message_delivered_away_from_its_confirmed_position_is_reported():
    model = Model(partitions=4)
    model.sent("2:9", "k", (2, 1, 5, 9))
    model.delivered("sub-shared", "2:9", "k", (2, 1, 6, 9), 0)
    assert checked(model)["count"] == 1
