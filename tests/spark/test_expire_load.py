"""The expire job's load steps on stand-in clients: batched deletes, the dedup snapshot taken
before deleting, dead-ledger checks, trash manifests and orphan deletes."""

from __future__ import annotations

import json
from collections import namedtuple

import pytest

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.producers import DedupSnapshot
from magnetar_core.domain.topic import TopicMeta
from magnetar_jobs.common import JobArgs
from magnetar_jobs.expire_load import (
    delete_items,
    delete_orphans,
    ledger_is_dead,
    snapshot_dedup,
    trash_objects,
)
from magnetar_wire.names import TopicName

PK = "persistent://t/ns/a|2"


class Dynamo:
    """Records BatchWriteItem requests; the first ``unprocessed`` calls hand one key back."""

    def __init__(self, unprocessed: int = 0):
        self.requests, self.unprocessed = [], unprocessed

    def batch_write_item(self, RequestItems):  # noqa: N803 - boto3's name
        ((table, writes),) = RequestItems.items()
        self.requests.append([int(w["DeleteRequest"]["Key"]["eid"]["N"]) for w in writes])
        if self.unprocessed:
            self.unprocessed -= 1
            return {"UnprocessedItems": {table: writes[-1:]}}
        return {"UnprocessedItems": {}}


def test_index_items_are_deleted_25_keys_a_request_and_unprocessed_keys_retried():
    ddb = Dynamo(unprocessed=1)
    waits = []
    assert delete_items(ddb, "log", PK, range(60), sleep=waits.append) == 60
    assert [len(r) for r in ddb.requests] == [25, 1, 25, 10]
    assert ddb.requests[1] == [24]
    assert sorted(e for r in ddb.requests for e in r) == sorted([*range(60), 24])
    assert waits == [0.05]


def test_index_deletes_can_keep_several_requests_in_flight():
    ddb = Dynamo()
    assert delete_items(ddb, "log", PK, range(100), threads=4) == 100
    assert sorted(len(r) for r in ddb.requests) == [25, 25, 25, 25]
    assert sorted(e for r in ddb.requests for e in r) == list(range(100))


class Log:
    def __init__(self, tail):
        self.tail, self.asked = tail, []

    def producer_tail(self, pk, start):
        self.asked.append(start)
        return [row for row in self.tail if row[0] >= start]


class Producers:
    def __init__(self, snapshot, race=False):
        self.stored, self.race, self.written = snapshot, race, []

    def snapshot(self, pk):
        return DedupSnapshot(self.stored.upto, dict(self.stored.last))

    def put_snapshot(self, pk, snapshot):
        if self.race:
            raise ConditionFailed("newer")
        self.written.append(snapshot)


def test_a_dedup_snapshot_covers_the_entries_about_to_be_deleted():
    log = Log([(3, "p", 7, True), (4, "q", 1, True), (5, "p", 9, False), (6, "", 0, False)])
    producers = Producers(DedupSnapshot(2, {"p": 5, "r": 4}))
    assert snapshot_dedup(log, producers, PK, through=5)
    assert log.asked == [3]
    (written,) = producers.written
    assert (written.upto, written.last) == (6, {"p": 7, "q": 1, "r": 4})


def test_no_snapshot_is_written_when_the_stored_one_covers_the_deletion_or_a_newer_won():
    producers = Producers(DedupSnapshot(9, {"p": 5}))
    assert not snapshot_dedup(Log([]), producers, PK, through=9)
    assert producers.written == []
    racing = Producers(DedupSnapshot(-1, {}), race=True)
    assert snapshot_dedup(Log([(0, "p", 0, True)]), racing, PK, through=0)


class Topics:
    def __init__(self, *metas):
        self.metas = {m.name: m for m in metas}

    def get(self, name):
        return self.metas.get(name)


def meta(name, ledger, state="active", partitions=0):
    return TopicMeta(TopicName.parse(name), ledger, partitions, state, 1, 0)


@pytest.mark.parametrize(
    ("pk", "metas", "dead"),
    [
        (PK, [meta("persistent://t/ns/a", 2, "deleted")], True),
        (PK, [meta("persistent://t/ns/a", 3)], True),
        (PK, [meta("persistent://t/ns/a", 2)], False),
        (PK, [], False),
        (PK, [meta("persistent://t/ns/a", 1, "deleted")], False),
        ("persistent://t/ns/p-partition-1|4", [meta("persistent://t/ns/p", 5, partitions=2)], True),
        (
            "persistent://t/ns/p-partition-1|5",
            [meta("persistent://t/ns/p", 5, partitions=2)],
            False,
        ),
        (PK + "|compacted|run1", [meta("persistent://t/ns/a", 2)], False),
        (PK + "|compacted|run1", [meta("persistent://t/ns/a", 2, "deleted")], True),
        ("not a key", [], False),
    ],
)
def test_a_ledger_counts_as_dead_only_when_the_topics_table_shows_it_superseded(pk, metas, dead):
    assert ledger_is_dead(Topics(*metas), pk) is dead


class S3:
    def __init__(self):
        self.puts, self.deletes = {}, []

    def put_object(self, Bucket, Key, Body, **_):  # noqa: N803 - boto3's names
        self.puts[Key] = json.loads(Body)

    def delete_objects(self, Bucket, Delete):  # noqa: N803
        self.deletes.append([o["Key"] for o in Delete["Objects"]])
        return {}


ARGS = JobArgs("expire", "bucket", "topics", "log", "cursors")
Freed = namedtuple("Freed", "obj bytes pks")
Orphan = namedtuple("Orphan", "key size")


def test_only_objects_freed_by_ledgers_whose_deletes_completed_go_to_trash():
    s3 = S3()
    rows = [Freed("a", 10, ["x"]), Freed("b", 20, ["x", "y"]), Freed("c", 30, ["z"])]
    assert trash_objects(s3, ARGS, rows, {"x", "y"}, due_ms=1234) == (2, 30)
    ((key, body),) = s3.puts.items()
    assert key.startswith("trash/0000000001234-expire-")
    assert (body["keys"], body["sizes"]) == (["a", "b"], {"a": 10, "b": 20})


def test_orphans_are_deleted_1000_keys_a_request():
    s3 = S3()
    rows = [Orphan(f"entries/k{i:04d}", 1) for i in range(1001)]
    assert delete_orphans(s3, "bucket", rows) == (1001, 1001)
    assert [len(d) for d in s3.deletes] == [1000, 1]
