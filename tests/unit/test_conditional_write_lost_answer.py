"""A conditional DynamoDB write whose answer was lost and that botocore sent again counts
once: the retry fails its condition against the write itself, which is a success (found by
``magnetar chaos``: the dispatcher re-planned on its own landed cursor write)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.clients import WRITE_TOKEN
from magnetar_core.adapters.aws.compaction import CompactionStore
from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.policies import PolicyStore
from magnetar_core.adapters.aws.producers import ProducerStateStore
from magnetar_core.adapters.aws.topics import TopicStore
from magnetar_core.domain.compaction import CompactionState
from magnetar_core.domain.cursor.state import CursorState
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.policies import NamespacePolicies
from magnetar_core.domain.producers import ProducerLease
from magnetar_core.domain.topic import TopicMeta
from magnetar_wire.names import TopicName


class LosingTable:
    """One DynamoDB table (a dict) whose put_item, on its first call, stores the item and
    then fails as botocore's retry of it does (the condition fails against itself)."""

    def __init__(self, lose_first: bool) -> None:
        self.items: dict[tuple, dict] = {}
        self.lose_first = lose_first

    @staticmethod
    def key_of(item: dict) -> tuple:
        """(partition key, sort key): ``sub`` in the cursors table, ``name`` in topics'."""
        return item["pk"]["S"], (item.get("sub") or item["name"])["S"]

    def put_item(self, TableName, Item, **condition):  # noqa: N803 - boto3's names
        key = self.key_of(Item)
        if self.lose_first:
            self.lose_first = False
            self.items[key] = Item
            raise ClientError({"Error": {"Code": "ConditionalCheckFailedException"}}, "PutItem")
        self.items[key] = Item

    def get_item(self, TableName, Key, **kwargs):  # noqa: N803 - boto3's names
        item = self.items.get(self.key_of(Key))
        return {"Item": item} if item else {}


def test_a_cursor_write_whose_answer_was_lost_and_was_retried_counts_as_written():
    table = LosingTable(lose_first=True)
    state = CursorState(subscription="s", sub_type="Shared", mark_delete=-1, read_position=0)
    CursorStore(table, "cursors").put("t|1", state)
    assert state.version == 1 and WRITE_TOKEN in table.items[("t|1", "s")]


def test_a_cursor_write_that_lost_to_another_writer_still_fails_its_condition():
    table = LosingTable(lose_first=False)
    other = CursorState(subscription="s", sub_type="Shared", mark_delete=-1, read_position=0)
    CursorStore(table, "cursors").put("t|1", other)
    table.lose_first = False

    def refuse(TableName, Item, **condition):  # noqa: N803
        raise ClientError({"Error": {"Code": "ConditionalCheckFailedException"}}, "PutItem")

    table.put_item = refuse  # type: ignore[method-assign]
    mine = CursorState(subscription="s", sub_type="Shared", mark_delete=-1, read_position=0)
    with pytest.raises(ConditionFailed):
        CursorStore(table, "cursors").put("t|1", mine)
    assert mine.version == 0


def write_lease(table: LosingTable) -> int:
    lease = ProducerLease(epoch=1, holder="p", mode="Exclusive", seen_ms=5)
    ProducerStateStore(table, "cursors").put_lease("t|1", lease)
    return lease.version


def write_compaction_state(table: LosingTable) -> int:
    state = CompactionState()
    CompactionStore(table, "cursors", "log").put("t", state)
    return state.version


def write_policies(table: LosingTable) -> int:
    stored = PolicyStore(table, "topics").put("acme/orders", NamespacePolicies(deduplication=True))
    return stored.version


def write_topic(table: LosingTable) -> int:
    name = TopicName.parse("persistent://acme/orders/t")
    TopicStore(table, "topics").put(TopicMeta(name, 1, 0, "active", 1, 0), None)
    return 1


@pytest.mark.parametrize(
    "write", [write_lease, write_compaction_state, write_policies, write_topic],
    ids=["producer lease", "compaction state", "namespace policies", "topic"],
)  # fmt: skip
def test_every_versioned_write_whose_answer_was_lost_counts_as_written_once(write):
    table = LosingTable(lose_first=True)
    assert write(table) == 1
    [item] = table.items.values()
    assert WRITE_TOKEN in item


class OvertakenTable(LosingTable):
    """The first put_item lands, then another dispatcher reads that item and writes on top
    of it (with its own store), and only then does botocore's retry fail its condition: the
    check read finds the other dispatcher's item (reliability finding 7)."""

    def __init__(self) -> None:
        super().__init__(lose_first=True)
        self.overtake = True

    def put_item(self, TableName, Item, **condition):  # noqa: N803 - boto3's names
        landed = self.lose_first
        try:
            super().put_item(TableName, Item, **condition)
        except ClientError:
            if landed and self.overtake:
                self.overtake = False
                other = CursorStore(self, "cursors")  # another container's store
                state = other.get("t|1", "s")
                state.read_position += 5  # it plans on top of the landed write
                other.put("t|1", state)
            raise


def test_a_landed_cursor_write_that_another_dispatcher_built_on_before_the_check_counts():
    table = OvertakenTable()
    state = CursorState(subscription="s", sub_type="Shared", mark_delete=-1, read_position=0)
    CursorStore(table, "cursors").put("t|1", state)

    assert state.version == 1  # written, not a lost race to plan again on top of itself
    assert table.items[("t|1", "s")]["ver"]["N"] == "2"  # the other write came after it


def test_a_write_is_not_taken_as_landed_because_of_an_unrelated_later_write():
    table = LosingTable(lose_first=False)
    first = CursorState(subscription="s", sub_type="Shared", mark_delete=-1, read_position=0)
    store = CursorStore(table, "cursors")
    store.put("t|1", first)
    stale = store.get("t|1", "s")
    again = store.get("t|1", "s")
    store.put("t|1", again)  # version 2, built on version 1

    def refuse(TableName, Item, **condition):  # noqa: N803
        raise ClientError({"Error": {"Code": "ConditionalCheckFailedException"}}, "PutItem")

    table.put_item = refuse  # type: ignore[method-assign]
    with pytest.raises(ConditionFailed):
        store.put("t|1", stale)  # planned on version 1: a lost race
