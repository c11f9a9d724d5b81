"""magnetar_jobs.garbage on the emulator: manifests, grace, idempotent purges."""

from __future__ import annotations

import uuid

import pytest

from magnetar_jobs.garbage import (
    due_of,
    manifest_key,
    manifests,
    purge_due,
    read_manifest,
    schedule_deletes,
    trashed_keys,
)


@pytest.fixture
def s3(aws_clients):
    return aws_clients.s3


@pytest.fixture
def bucket(s3):
    name = f"garbage-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=name)
    return name


def _put(s3, bucket: str, key: str, size: int) -> None:
    s3.put_object(Bucket=bucket, Key=key, Body=b"x" * size)


def _keys(s3, bucket: str) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))


def test_a_manifest_key_holds_the_zero_padded_due_time_so_listing_order_is_due_order():
    assert manifest_key(1_700_000_000_000, "expire", "abc") == (
        "trash/1700000000000-expire-abc.json"
    )
    assert manifest_key(5, "j", "i") == "trash/0000000000005-j-i.json"
    assert due_of("trash/0000000000005-j-i.json") == 5


def test_schedule_deletes_writes_one_manifest_listing_the_keys_and_their_sizes(s3, bucket):
    key = schedule_deletes(
        s3, bucket, ["b", "a", "b"], 2_000, "compact-segments", {"a": 3, "b": 4}, lambda: "id1"
    )
    assert key == "trash/0000000002000-compact-segments-id1.json"
    assert read_manifest(s3, bucket, key) == {
        "job": "compact-segments",
        "due_ms": 2_000,
        "keys": ["a", "b"],
        "sizes": {"a": 3, "b": 4},
    }
    assert list(manifests(s3, bucket)) == [key]


def test_scheduling_no_keys_writes_nothing(s3, bucket):
    assert schedule_deletes(s3, bucket, [], 1, "expire") == ""
    assert _keys(s3, bucket) == []


def test_purge_deletes_only_what_is_due_and_counts_objects_and_bytes(s3, bucket):
    for key, size in {"e/1": 10, "e/2": 20, "e/3": 30, "keep": 5}.items():
        _put(s3, bucket, key, size)
    early = schedule_deletes(s3, bucket, ["e/1", "e/2"], 1_000, "a", {"e/1": 10, "e/2": 20})
    late = schedule_deletes(s3, bucket, ["e/3"], 3_000, "b", {"e/3": 30})

    assert purge_due(s3, bucket, now_ms=999) == (0, 0)
    assert _keys(s3, bucket) == sorted(["e/1", "e/2", "e/3", "keep", early, late])

    assert purge_due(s3, bucket, now_ms=1_000) == (2, 30)
    assert _keys(s3, bucket) == sorted(["e/3", "keep", late])
    assert trashed_keys(s3, bucket) == {"e/3"}

    assert purge_due(s3, bucket, now_ms=10_000) == (1, 30)
    assert _keys(s3, bucket) == ["keep"]
    assert trashed_keys(s3, bucket) == set()


def test_a_purge_repeated_after_a_crash_between_the_objects_and_the_manifest_finishes(s3, bucket):
    _put(s3, bucket, "e/1", 7)
    manifest = schedule_deletes(s3, bucket, ["e/1", "e/never-existed"], 5, "j")
    s3.delete_object(Bucket=bucket, Key="e/1")  # the crashed purge got this far

    assert purge_due(s3, bucket, now_ms=5) == (2, 0)
    assert _keys(s3, bucket) == []
    assert manifest not in _keys(s3, bucket)


def test_a_manifest_of_more_than_a_thousand_keys_is_deleted_in_batches(s3, bucket):
    keys = [f"e/{i:05d}" for i in range(1_005)]
    for key in keys:
        _put(s3, bucket, key, 1)
    schedule_deletes(s3, bucket, keys, 1, "j", dict.fromkeys(keys, 1))
    assert purge_due(s3, bucket, now_ms=1) == (1_005, 1_005)
    assert _keys(s3, bucket) == []


def test_objects_outside_the_manifests_are_never_touched(s3, bucket):
    _put(s3, bucket, "trash/notes.txt", 1)  # not a manifest name: left alone
    _put(s3, bucket, "e/1", 1)
    schedule_deletes(s3, bucket, ["e/1"], 1, "j")
    assert purge_due(s3, bucket, now_ms=2) == (1, 0)
    assert _keys(s3, bucket) == ["trash/notes.txt"]
    assert trashed_keys(s3, bucket) == set()


def test_a_key_whose_index_item_still_references_it_is_kept_and_the_others_deleted(
    s3, bucket, aws_clients, local_stack
):
    ddb, table = aws_clients.dynamodb, local_stack.name("LogTable")
    pk = f"persistent://public/garbage/t-{uuid.uuid4().hex[:6]}|1"
    for eid, obj in [(0, "e/0"), (1, "segments/x/0-1")]:
        ddb.put_item(
            TableName=table, Item={"pk": {"S": pk}, "eid": {"N": str(eid)}, "obj": {"S": obj}}
        )
    for key in ("e/0", "e/1", "e/2"):
        _put(s3, bucket, key, 4)
    # e/0: the switch never happened (crash); e/1: switched; e/2: its item is gone
    refs = {"e/0": (pk, 0), "e/1": (pk, 1), "e/2": (pk, 2)}
    manifest = schedule_deletes(
        s3, bucket, refs, 1, "compact-segments", dict.fromkeys(refs, 4), refs=refs
    )
    assert read_manifest(s3, bucket, manifest)["refs"] == {
        "e/0": [pk, 0],
        "e/1": [pk, 1],
        "e/2": [pk, 2],
    }

    assert purge_due(s3, bucket, now_ms=1) == (0, 0)  # no DynamoDB client: left for later
    assert _keys(s3, bucket) == sorted(["e/0", "e/1", "e/2", manifest])

    assert purge_due(s3, bucket, now_ms=1, dynamodb=ddb, log_table=table) == (2, 8)
    assert _keys(s3, bucket) == ["e/0"]
