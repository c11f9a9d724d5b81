"""``magnetar admin topics``' subscription and message verbs against the memory service:
tables for people, ``--output json`` for scripts, nothing printed for changes, errors on
stderr with status 1."""

from __future__ import annotations

import json

import pytest

import magnetar
from magnetar.cli import main as cli
from magnetar.cli.admin.topics import message_id_body, relative_ms

TOPIC = "persistent://public/default/cli-ops"


def admin(svc, capsys, *words: str) -> tuple[int, str, str]:
    status = cli.main(["admin", "--service-url", svc.url, "topics", *words])
    out = capsys.readouterr()
    return status, out.out, out.err


def produce(svc, *payloads: str, batch: bool = False) -> None:
    client = magnetar.Client(svc.url)
    try:
        producer = client.create_producer(TOPIC, batching_enabled=batch)
        for payload in payloads:
            if batch:
                producer.send_async(payload.encode(), lambda *_: None, properties={"n": payload})
            else:
                producer.send(payload.encode(), properties={"n": payload})
        producer.flush()
    finally:
        client.close()


def test_relative_times_and_message_ids_are_read_as_pulsar_admin_reads_them():
    assert [relative_ms(t) for t in ("30", "30s", "10m", "2h", "1d", "1w")] == [
        30_000, 30_000, 600_000, 7_200_000, 86_400_000, 604_800_000,
    ]  # fmt: skip
    assert message_id_body("1:7") == {"ledgerId": 1, "entryId": 7, "partitionIndex": -1, "batchIndex": -1}  # fmt: skip
    assert message_id_body("earliest") == {"ledgerId": -1, "entryId": -1}
    for bad in ("10 minutes", "-5m"):
        with pytest.raises(ValueError):
            relative_ms(bad)
    with pytest.raises(ValueError):
        message_id_body("1")


def test_peek_prints_a_table_or_json_and_a_batch_as_its_messages(svc, capsys):
    produce(svc, "one")
    produce(svc, "two", "three", batch=True)
    assert admin(svc, capsys, "create-subscription", TOPIC, "-s", "s", "-m", "earliest")[:2] == (0, "")  # fmt: skip
    status, out, _ = admin(svc, capsys, "peek-messages", TOPIC, "-s", "s", "-n", "5")
    lines = out.splitlines()
    assert status == 0 and lines[0].split()[:2] == ["MESSAGE", "ID"]
    assert [line.split()[0] for line in lines[1:]] == ["1:0", "1:1:0", "1:1:1"]
    assert [line.split()[-1] for line in lines[1:]] == ["one", "two", "three"]
    status, out, _ = admin(svc, capsys, "peek-messages", TOPIC, "-s", "s", "-n", "2", "--output", "json")  # fmt: skip
    rows = json.loads(out)
    assert [(r["messageId"], r["payload"], r["properties"]) for r in rows] == [
        ("1:0", "one", {"n": "one"}), ("1:1:0", "two", {"n": "two"}),
    ]  # fmt: skip
    status, out, _ = admin(svc, capsys, "examine-message", TOPIC, "-i", "earliest", "--output", "json")  # fmt: skip
    assert [r["payload"] for r in json.loads(out)] == ["one"]


def test_skip_clear_reset_and_expire_move_the_subscription_and_print_nothing(svc, capsys):
    produce(svc, "a", "b", "c")
    admin(svc, capsys, "create-subscription", TOPIC, "-s", "s", "-m", "earliest")

    def peeked() -> list[str]:
        out = admin(svc, capsys, "peek-messages", TOPIC, "-s", "s", "-n", "9", "--output", "json")[1]  # fmt: skip
        return [r["payload"] for r in json.loads(out)]

    assert admin(svc, capsys, "skip", TOPIC, "-s", "s", "-n", "1")[:2] == (0, "")
    assert peeked() == ["b", "c"]
    assert admin(svc, capsys, "clear-backlog", TOPIC, "-s", "s")[:2] == (0, "")
    assert peeked() == []
    assert admin(svc, capsys, "reset-cursor", TOPIC, "-s", "s", "-t", "1h")[:2] == (0, "")
    assert peeked() == ["a", "b", "c"]
    assert admin(svc, capsys, "reset-cursor", TOPIC, "-s", "s", "-m", "1:1", "-e")[0] == 0
    assert peeked() == ["c"]
    assert admin(svc, capsys, "expire-messages-all-subscriptions", TOPIC, "-t", "0")[0] == 0
    assert peeked() == []


def test_subscriptions_unsubscribe_and_errors(svc, capsys):
    produce(svc, "x")
    for sub in ("b", "a"):
        admin(svc, capsys, "create-subscription", TOPIC, "-s", sub)
    assert admin(svc, capsys, "subscriptions", TOPIC) == (0, "a\nb\n", "")
    assert json.loads(admin(svc, capsys, "subscriptions", TOPIC, "--output", "json")[1]) == ["a", "b"]  # fmt: skip
    assert admin(svc, capsys, "unsubscribe", TOPIC, "-s", "a")[:2] == (0, "")
    status, _, err = admin(svc, capsys, "skip", TOPIC, "-s", "nope", "-n", "1")
    assert status == 1 and "SubscriptionNotFound" in err and "Subscription not found" in err
    status, _, err = admin(svc, capsys, "create-subscription", TOPIC, "-s", "b")
    assert status == 1 and "Conflict" in err
