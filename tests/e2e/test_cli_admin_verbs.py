"""``magnetar admin``'s namespace policy verbs and topic verbs on the embedded stack, as an
operator uses them: a policy set, read and removed in pulsar-admin's units, and a topic
walked from create to delete, each step read back through the CLI."""

from __future__ import annotations

import json
import uuid

import magnetar
from magnetar.cli.main import main


def admin(capsys, url: str, *args: str) -> tuple[int, str, str]:
    status = main(["admin", "--service-url", url, *args])
    out, err = capsys.readouterr()
    return status, out, err


def read_json(capsys, url: str, *args: str):
    status, out, err = admin(capsys, url, *args, "-o", "json")
    assert status == 0, err
    return json.loads(out)


def namespace(capsys, url: str) -> str:
    tenant = f"ops-{uuid.uuid4().hex[:8]}"
    assert admin(capsys, url, "tenants", "create", tenant)[0] == 0
    assert admin(capsys, url, "namespaces", "create", f"{tenant}/app")[0] == 0
    return f"{tenant}/app"


def test_an_operator_sets_reads_and_removes_namespace_policies_in_pulsar_admins_units(local_stack, capsys):  # fmt: skip
    url = local_stack.url
    ns = namespace(capsys, url)
    sets = [
        ("set-retention", ns, "--size", "1G", "--time", "2h"),
        ("set-message-ttl", ns, "-ttl", "10m"),
        ("set-deduplication", ns, "--enable"),
        ("set-delayed-delivery", ns, "--disable", "--time", "2s"),
    ]
    for words in sets:
        assert admin(capsys, url, "namespaces", *words) == (0, "", "")
    assert read_json(capsys, url, "namespaces", "get-retention", ns) == {
        "retentionTimeInMinutes": 120, "retentionSizeInMB": 1024,
    }  # fmt: skip
    assert admin(capsys, url, "namespaces", "get-message-ttl", ns) == (0, "600\n", "")
    assert read_json(capsys, url, "namespaces", "get-deduplication", ns) is True
    delayed = read_json(capsys, url, "namespaces", "get-delayed-delivery", ns)
    assert (delayed["active"], delayed["tickTime"]) == (False, 2000)
    status, table, _ = admin(capsys, url, "namespaces", "policies", ns)
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()}
    assert status == 0 and rows["message_ttl_in_seconds"] == ["600"]
    assert rows["deduplicationEnabled"] == ["true"]

    for verb in ("retention", "message-ttl", "deduplication", "delayed-delivery"):
        assert admin(capsys, url, "namespaces", f"remove-{verb}", ns) == (0, "", "")
    policies = read_json(capsys, url, "namespaces", "policies", ns)
    assert [policies[k] for k in ("retention_policies", "message_ttl_in_seconds",
            "deduplicationEnabled", "delayed_delivery_policies")] == [None] * 4  # fmt: skip

    status, _, err = admin(capsys, url, "namespaces", "set-retention", ns, "-s", "0", "-t", "1h")
    assert status == 1 and err.startswith("error: InvalidMessage: Invalid retention policy")
    assert admin(capsys, url, "tenants", "delete", ns.split("/")[0], "-f")[0] == 0


def test_an_operator_walks_a_topic_from_create_through_its_backlog_to_delete(local_stack, capsys):
    url = local_stack.url
    ns = namespace(capsys, url)
    topic = f"persistent://{ns}/orders"
    assert admin(capsys, url, "topics", "create", topic) == (0, "", "")
    assert admin(capsys, url, "topics", "list", ns) == (0, f"{topic}\n", "")
    assert admin(capsys, url, "topics", "create-subscription", topic, "-s", "audit")[0] == 0
    client = magnetar.Client(url)
    try:
        producer = client.create_producer(topic)
        for payload in (b"a", b"b", b"c"):
            producer.send(payload)
    finally:
        client.close()

    def backlog() -> int:
        return read_json(capsys, url, "topics", "stats", topic)["subscriptions"]["audit"]["msgBacklog"]  # fmt: skip

    status, table, _ = admin(capsys, url, "topics", "stats", topic)
    assert status == 0 and "SUBSCRIPTION  TYPE" in table and "msgInCounter" in table
    status, out, _ = admin(capsys, url, "topics", "peek-messages", topic, "-s", "audit", "-n", "1")
    assert status == 0 and out.splitlines()[1].split()[-1] == "a"
    assert admin(capsys, url, "topics", "skip", topic, "-s", "audit", "-n", "1")[0] == 0
    assert backlog() == 2
    assert admin(capsys, url, "topics", "expire-messages", topic, "-s", "audit", "-t", "1h")[0] == 0
    assert backlog() == 2  # nothing is an hour old
    assert admin(capsys, url, "topics", "reset-cursor", topic, "-s", "audit", "-t", "1h")[0] == 0
    assert backlog() == 3
    assert admin(capsys, url, "topics", "clear-backlog", topic, "-s", "audit")[0] == 0
    assert backlog() == 0
    assert admin(capsys, url, "topics", "unsubscribe", topic, "-s", "audit")[0] == 0
    assert admin(capsys, url, "topics", "subscriptions", topic) == (0, "", "")
    assert admin(capsys, url, "topics", "delete", topic)[0] == 0
    assert admin(capsys, url, "topics", "list", ns) == (0, "", "")
    status, _, err = admin(capsys, url, "topics", "stats", topic)
    assert (status, err) == (1, f"error: TopicNotFound: Topic {topic} does not exist\n")
    assert admin(capsys, url, "tenants", "delete", ns.split("/")[0], "-f")[0] == 0
