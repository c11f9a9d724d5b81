"""Issue 14's topic verbs end to end on the embedded stack (SDK -> HTTP -> handlers ->
emulator): after ``magnetar admin topics terminate`` a send fails with TopicTerminated and
stores nothing while a reader reads to the end, and after ``update-partitioned-topic`` a
producer sends to the new partition once it refreshes its partition count."""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

import magnetar as pulsar
from magnetar.cli.main import main


def admin(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["admin", "--service-url", url, "topics", *args])
    out, err = capsys.readouterr()
    return status, out, err


def stats(url: str, topic: str) -> dict:
    path = topic.replace("persistent://", "persistent/")
    with urllib.request.urlopen(f"{url}/admin/v2/{path}/stats", timeout=30) as answer:
        return json.loads(answer.read())


def test_terminate_then_produce_fails_storing_nothing_and_a_reader_reaches_the_end(
    local_stack, aws_clients, client, capsys
):
    topic = f"persistent://public/default/end-{uuid.uuid4().hex[:8]}"
    producer = client.create_producer(topic)
    last = producer.send(b"last")
    assert admin(capsys, local_stack.url, "terminate", topic) == (0, f"{last}\n", "")
    with pytest.raises(pulsar.TopicTerminated):
        producer.send(b"too late" * 1000)  # too large to go inline: an S3 object
    assert stats(local_stack.url, topic)["msgInCounter"] == 1  # nothing committed
    bucket = local_stack.environment["ENTRIES_BUCKET"]
    prefix = "entries/" + topic.replace("://", "/") + "/"
    listed = aws_clients.s3.list_objects_v2(Bucket=bucket, Prefix=prefix)
    assert listed["KeyCount"] == 0  # "last" is inline; the refused send's object is gone
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    assert reader.read_next(5000).data() == b"last"
    assert not reader.has_message_available()
    assert reader.has_reached_end_of_topic()
    reader.close()


def test_a_producer_sends_to_a_partition_added_by_update_partitioned_topic(
    local_stack, client, capsys
):
    topic = f"persistent://public/default/grow-{uuid.uuid4().hex[:8]}"
    path = topic.replace("persistent://", "persistent/")
    request = urllib.request.Request(f"{local_stack.url}/admin/v2/{path}/partitions",
                                     b"1", {"Content-Type": "application/json"}, method="PUT")  # fmt: skip
    urllib.request.urlopen(request, timeout=30).close()
    client._partitions_update_interval_s = 0.0  # refresh the partition count at every send
    producer = client.create_producer(topic)
    assert producer.send(b"before").partition() == 0
    assert admin(capsys, local_stack.url, "update-partitioned-topic", topic, "-p", "2")[0] == 0
    assert {producer.send(b"after").partition() for _ in range(2)} == {0, 1}  # round robin
    reader = client.create_reader(f"{topic}-partition-1", pulsar.MessageId.earliest)
    assert reader.read_next(5000).data() == b"after"
    reader.close()
