"""``magnetar perf expire-cost``'s pieces without a stack: the wire recorder's operation names
and request units, and the model's scaling."""

from __future__ import annotations

import argparse

from magnetar_bench.aws_recorder import Recorder, key_of, s3_operation
from magnetar_bench.expire_model import Measured, Usage, extrapolate, traffic_s3


def test_s3_requests_are_named_by_method_path_and_query():
    assert s3_operation("GET", "/b", "list-type=2&prefix=entries/", {}) == "ListObjectsV2"
    assert s3_operation("GET", "/b/trash/1.json", "", {}) == "GetObject"
    assert s3_operation("POST", "/b", "delete", {}) == "DeleteObjects"
    assert s3_operation("PUT", "/b/k", "", {"x-amz-copy-source": "b/j"}) == "CopyObject"
    assert s3_operation("PUT", "/b/k", "", {}) == "PutObject"


def test_a_projected_query_bills_the_stored_items_and_a_delete_the_stored_size():
    key = {"pk": {"S": "t|1"}, "eid": {"N": "0"}}
    recorder = Recorder()
    recorder.reset({("log", key_of(key)): 9000})
    recorder.dynamodb("Query", {"TableName": "log", "ConsistentRead": True}, {"Items": [key]})
    delete = {"log": [{"DeleteRequest": {"Key": key}}]}
    recorder.dynamodb("BatchWriteItem", {"RequestItems": delete}, {})
    seen = recorder.snapshot()
    assert seen["units"] == {"log RRU": 3.0, "log WRU": 9.0}
    assert seen["requests"] == {"dynamodb.BatchWriteItem": 1, "dynamodb.Query": 1}


def test_a_keys_only_scan_bills_the_mean_stored_item_not_the_projected_key():
    sizes = {("log", key_of({"pk": {"S": "t|1"}, "eid": {"N": str(e)}})): 3000 for e in range(4)}
    recorder = Recorder()
    recorder.reset(sizes)
    projected = [{"pk": {"S": "t|1"}}] * 4
    recorder.dynamodb("Scan", {"TableName": "log"}, {"Items": projected})
    assert recorder.snapshot()["units"] == {"log RRU": 1.5}  # 12,000 B, eventually consistent


def test_a_query_projected_without_its_partition_key_bills_the_stored_items():
    key = {"pk": {"S": "t|1"}, "eid": {"N": "7"}}
    recorder = Recorder()
    recorder.reset({("log", key_of(key)): 8000})
    request = {"TableName": "log", "ConsistentRead": True, "KeyConditionExpression":
               "pk = :pk AND eid >= :s", "ExpressionAttributeValues": {":pk": key["pk"]}}  # fmt: skip
    recorder.dynamodb("Query", request, {"Items": [{"eid": key["eid"]}]})
    assert recorder.snapshot()["units"] == {"log RRU": 2.0}


def run(rru, wru=0.0, lists=0):
    return {"units": {"log RRU": rru, "log WRU": wru}, "requests": {"s3.ListObjectsV2": lists}}


def test_the_full_pass_grows_with_retained_items_and_the_incremental_run_does_not():
    opts = argparse.Namespace(partitions=2, retained=1000, new=100, entries_per_object=100,
                              message_bytes=1024)  # fmt: skip
    runs = {"quiet_full": run(2002.0, lists=4), "quiet_incremental": run(2.0),
            "traffic_incremental": run(202.0, 400.0)}  # fmt: skip
    model = extrapolate(Measured.of(runs, opts, item_bytes=150.0), partitions=2)
    small, large = model["1 GB"], model["10 TB"]
    assert large["after"]["nothing_new"] == small["after"]["nothing_new"]
    ratio = large["before"]["nothing_new"]["rru"] / small["before"]["nothing_new"]["rru"]
    assert 9_000 < ratio < 11_000
    assert large["after"]["traffic"]["wru"] == 900_000 * 2  # 400 WRU per 200 entries


def test_usage_prices_request_units_and_glue_minutes():
    dollars = Usage(rru=1e6, wru=1e6).dollars()
    assert round(dollars["dynamodb"], 3) == 0.75
    assert round(dollars["glue"], 4) == round(2 * 0.44 / 60, 4)


def test_trash_requests_grow_with_freed_segments_not_with_entries():
    assert traffic_s3(900_000).s3_writes == 1 + 1 + 1 + 1  # 110 segments: 1 manifest
    assert traffic_s3(100_000_000).s3_writes == 2 + 13 + 2 + 1
