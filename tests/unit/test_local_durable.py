"""moto's writes journaled and replayed (magnetar_local.durable), on moto in-process."""

from __future__ import annotations

import threading

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend
from moto.s3.models import S3Backend

from magnetar_local.durable import JOURNALED, Recorder
from magnetar_local.journal import DataDir
from magnetar_local.moto_state import IncompatibleDataDir, check_format

TABLE = {
    "TableName": "t",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}


@pytest.fixture
def recorder_in(monkeypatch):
    """A Recorder factory; the backends' methods are put back after the test. The clients
    must reach moto in-process: a worker whose session stack started has AWS_ENDPOINT_URL
    (the stack's emulator, for its in-process handlers) in its environment, which boto3
    honours (a full run once wrote this file's table "t" to that emulator, and the next test
    found it there: ResourceInUseException)."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    for cls, service in ((DynamoDBBackend, "dynamodb"), (S3Backend, "s3")):
        for name in JOURNALED[service]:
            monkeypatch.setattr(cls, name, getattr(cls, name))

    def make(path) -> Recorder:
        recorder = Recorder(DataDir(path, fsync=False), threading.RLock())
        recorder.install()
        return recorder

    return make


def _clients():
    session = boto3.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1")  # fmt: skip
    return session.client("dynamodb"), session.client("s3")


def _write_some(dynamodb, s3) -> None:
    dynamodb.create_table(**TABLE)
    s3.create_bucket(Bucket="entries")
    for key in ("a", "b", "c"):
        dynamodb.put_item(TableName="t", Item={"pk": {"S": key}, "n": {"N": "0"}})
    dynamodb.update_item(
        TableName="t",
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET n = n + :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    with pytest.raises(dynamodb.exceptions.ConditionalCheckFailedException):
        dynamodb.put_item(  # refused: changes nothing, so nothing to replay
            TableName="t", Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)"
        )
    dynamodb.delete_item(TableName="t", Key={"pk": {"S": "b"}})
    s3.put_object(Bucket="entries", Key="one", Body=b"1")
    s3.put_object(Bucket="entries", Key="two", Body=b"2")
    s3.delete_objects(Bucket="entries", Delete={"Objects": [{"Key": "one"}]})


def _read_all(dynamodb, s3) -> tuple[dict, list]:
    items = dynamodb.scan(TableName="t")["Items"]
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="entries").get("Contents", [])]
    bodies = [s3.get_object(Bucket="entries", Key=k)["Body"].read().decode() for k in keys]
    return {i["pk"]["S"]: i["n"]["N"] for i in items}, bodies


def _restored(recorder_in, path) -> tuple[dict, list]:
    with mock_aws():  # a fresh emulator: empty backends
        recorder = recorder_in(path)
        recorder.restore()
        return _read_all(*_clients())


def test_the_applied_writes_replay_into_empty_backends_as_the_same_state(tmp_path, recorder_in):
    with mock_aws():
        recorder = recorder_in(tmp_path)
        recorder.restore()
        _write_some(*_clients())
        before = _read_all(*_clients())

    assert before == ({"a": "1", "c": "0"}, ["2"])
    assert _restored(recorder_in, tmp_path) == before


def test_a_snapshot_then_more_writes_restore_as_the_state_after_them(tmp_path, recorder_in):
    with mock_aws():
        recorder = recorder_in(tmp_path)
        recorder.restore()
        dynamodb, s3 = _clients()
        _write_some(dynamodb, s3)
        recorder.snapshot()
        dynamodb.put_item(TableName="t", Item={"pk": {"S": "d"}, "n": {"N": "4"}})
        s3.put_object(Bucket="entries", Key="three", Body=b"3")
        before = _read_all(dynamodb, s3)

    assert before == ({"a": "1", "c": "0", "d": "4"}, ["3", "2"])
    assert DataDir(tmp_path).snapshots() == [1] and DataDir(tmp_path).segments() == [1]
    assert _restored(recorder_in, tmp_path) == before


def test_a_data_directory_written_by_another_moto_version_is_refused_naming_both(tmp_path):
    import json

    import moto

    data = DataDir(tmp_path)
    check_format(data)  # a new directory is marked with this version
    check_format(data)  # and accepted again
    (tmp_path / "format.json").write_text(json.dumps({"format": 1, "moto": "4.0.0"}))

    with pytest.raises(IncompatibleDataDir, match=f"moto 4.0.0 .*this is moto {moto.__version__}"):
        check_format(data)


def test_a_commit_replays_without_its_condition_and_a_condition_with_values_keeps_it():
    from magnetar_local.durable import _unconditional_put

    commit = ("log", {"eid": {"N": "1"}}, None, "attribute_not_exists(eid)", {}, {}, False, None)
    versioned = ("t", {"k": {"S": "a"}}, None, "ver = :v", {}, {":v": {"N": "1"}}, False, None)

    assert _unconditional_put(commit, {}) == (("log", {"eid": {"N": "1"}}, None, None, {}, {}, False, None), {})  # fmt: skip
    assert _unconditional_put(versioned, {}) == (versioned, {})
    assert _unconditional_put(commit[:2], {"condition_expression": "x"})[1] == {"condition_expression": "x"}  # fmt: skip
