"""Issue 14's subscription verbs end to end on the embedded stack: after ``magnetar admin
topics reset-cursor`` a subscription delivers its messages again, and the CLI's peek, skip
and clear-backlog move a subscription the SDK then reads from."""

from __future__ import annotations

import json
import urllib.request
import uuid

import magnetar as pulsar
from magnetar.cli.main import main


def admin(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["admin", "--service-url", url, "topics", *args])
    out, err = capsys.readouterr()
    return status, out, err


def backlog(url: str, topic: str, subscription: str) -> int:
    path = topic.replace("persistent://", "persistent/")
    with urllib.request.urlopen(f"{url}/admin/v2/{path}/stats", timeout=30) as answer:
        return json.loads(answer.read())["subscriptions"][subscription]["msgBacklog"]


def test_after_a_cli_reset_cursor_the_subscription_delivers_its_messages_again(
    local_stack, client, capsys
):
    topic = f"persistent://public/default/ops-{uuid.uuid4().hex[:8]}"
    shared = {"consumer_type": pulsar.ConsumerType.Shared,
              "initial_position": pulsar.InitialPosition.Earliest}  # fmt: skip
    consumer = client.subscribe(topic, "s", **shared)
    producer = client.create_producer(topic)
    for text in ("a", "b", "c"):
        producer.send(text.encode())
    for _ in range(3):
        consumer.acknowledge(consumer.receive(timeout_millis=5000))
    consumer.close()  # sends the acknowledgements it still holds
    assert backlog(local_stack.url, topic, "s") == 0
    reset = ("reset-cursor", topic, "-s", "s", "-t", "1h")
    assert admin(capsys, local_stack.url, *reset)[:2] == (0, "")
    assert backlog(local_stack.url, topic, "s") == 3
    fresh = client.subscribe(topic, "s", **shared)  # acknowledged messages come again too
    assert [fresh.receive(timeout_millis=5000).data() for _ in range(3)] == [b"a", b"b", b"c"]
    fresh.close()


def test_cli_peek_skip_and_clear_backlog_move_a_subscription_the_sdk_reads(
    local_stack, client, capsys
):
    url = local_stack.url
    topic = f"persistent://public/default/ops-{uuid.uuid4().hex[:8]}"
    producer = client.create_producer(topic)
    for text in ("a", "b", "c"):
        producer.send(text.encode(), properties={"n": text})
    assert admin(capsys, url, "create-subscription", topic, "-s", "s", "-m", "earliest")[0] == 0
    status, out, _ = admin(capsys, url, "peek-messages", topic, "-s", "s", "-n", "2", "--output", "json")  # fmt: skip
    assert status == 0
    assert [(r["payload"], r["properties"]) for r in json.loads(out)] == [("a", {"n": "a"}), ("b", {"n": "b"})]  # fmt: skip
    assert admin(capsys, url, "skip", topic, "-s", "s", "-n", "2")[0] == 0
    consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    assert consumer.receive(timeout_millis=5000).data() == b"c"
    assert admin(capsys, url, "clear-backlog", topic, "-s", "s")[0] == 0
    status, out, _ = admin(capsys, url, "peek-messages", topic, "-s", "s")
    assert (status, out) == (0, "")  # nothing left to peek
    status, _, err = admin(capsys, url, "skip", topic.replace("ops-", "nope-"), "-s", "s", "-n", "1")  # fmt: skip
    assert status == 1 and "TopicNotFound" in err
    consumer.close()
