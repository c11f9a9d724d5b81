"""``magnetar admin topics``' topic verbs against the memory service: terminate and
partitioned-terminate print the last message ids (JSON with ``--output json``), unload,
truncate and update-partitioned-topic print nothing; errors on stderr with status 1."""

from __future__ import annotations

import json

import magnetar
from magnetar.cli import main as cli

TOPIC = "persistent://public/default/cli-topic"


def admin(svc, capsys, *words: str) -> tuple[int, str, str]:
    status = cli.main(["admin", "--service-url", svc.url, "topics", *words])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_terminate_prints_the_last_message_id_and_later_sends_fail(svc, capsys):
    client = magnetar.Client(svc.url)
    try:
        producer = client.create_producer(TOPIC)
        last = producer.send(b"m")
        assert admin(svc, capsys, "terminate", TOPIC) == (0, f"{last}\n", "")
        status, out, _ = admin(svc, capsys, "terminate", TOPIC, "--output", "json")
        assert status == 0 and json.loads(out)["messageId"] == str(last)
    finally:
        client.close()


def test_partitioned_terminate_prints_one_id_per_partition(svc, capsys):
    svc.create_partitioned_topic("persistent/public/default/cli-parts", 2)
    status, out, _ = admin(svc, capsys, "partitioned-terminate", "persistent://public/default/cli-parts")  # fmt: skip
    assert status == 0 and out.splitlines() == ["0  -1:-1:-1:-1", "1  -1:-1:-1:-1"]
    status, _, err = admin(svc, capsys, "terminate", "persistent://public/default/cli-parts")
    assert status == 1 and "NotAllowed" in err


def test_update_unload_and_truncate_print_nothing_and_change_the_topic(svc, capsys):
    name = "persistent://public/default/cli-grow"
    svc.create_partitioned_topic("persistent/public/default/cli-grow", 2)
    assert admin(svc, capsys, "update-partitioned-topic", name, "-p", "3") == (0, "", "")
    client = magnetar.Client(svc.url)
    assert client.get_topic_partitions(name)[-1] == name + "-partition-2"
    client.close()
    assert admin(svc, capsys, "unload", name) == (0, "", "")
    assert admin(svc, capsys, "truncate", name) == (0, "", "")
    status, _, err = admin(svc, capsys, "update-partitioned-topic", name, "-p", "2")
    assert status == 1 and "Conflict" in err
