"""The data-plane sample events replayed (``event_replay``): topics created, listed and deleted; a
Shared subscription's produce, receive, ack, nack, redeliver and seek; an Exclusive
subscription; exclusive producers' leases and uploads."""

from __future__ import annotations

import base64
import json
from urllib.parse import unquote, urlsplit

import pytest
from event_replay import Replay, sample_body
from event_scenarios import ADMIN_EVENTS, EXCLUSIVE_EVENTS, PRODUCER_EVENTS, SHARED_EVENTS

from magnetar_wire import decode_entry


@pytest.mark.emulator
def test_the_admin_events_create_list_inspect_and_delete_a_topic_and_a_partitioned_topic(
    local_stack,
):
    run = Replay(local_stack, ADMIN_EVENTS)
    topic, partitioned = run.full_topic, f"{run.full_topic}-partitioned"

    health = run("admin_health")
    assert (health.status, health.text) == (200, "ok")
    assert health.headers["content-type"].startswith("text/plain")

    assert run("admin_create_topic").status == 204
    again = run("admin_create_topic")
    assert (again.status, again.error()) == (409, "TopicAlreadyExists")
    assert run("admin_create_partitioned").status == 204

    partitions = run("admin_get_partitions")
    assert (partitions.status, partitions.json) == (200, {"partitions": 3})

    listed = run("admin_list_topics")
    assert listed.status == 200
    assert {topic, *(f"{partitioned}-partition-{i}" for i in range(3))} <= set(listed.json)
    assert partitioned not in listed.json

    listed_partitioned = run("admin_list_partitioned")
    assert listed_partitioned.status == 200
    assert partitioned in listed_partitioned.json and topic not in listed_partitioned.json

    stats = run("admin_partitioned_stats")
    assert stats.status == 200
    assert sorted(stats.json["partitions"]) == [f"{partitioned}-partition-{i}" for i in range(3)]
    assert stats.json["msgInCounter"] == 0 and stats.json["subscriptions"] == {}

    assert run("admin_delete_topic").status == 204
    assert run("admin_delete_partitioned").status == 204
    gone = run("admin_get_partitions")
    assert (gone.status, gone.error()) == (404, "TopicNotFound")
    assert topic not in run("admin_list_topics").json
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_data_events_produce_receive_acknowledge_and_redeliver_on_a_shared_subscription(
    local_stack,
):
    run = Replay(local_stack, SHARED_EVENTS)

    subscribed = run("subscribe_shared")
    assert subscribed.status == 200
    consumer = subscribed.json["consumerId"]
    assert subscribed.json == {
        "consumerId": consumer,
        "consumerName": "demo-shared-consumer",
        "subscription": "demo",
        "topic": run.full_topic,
        "schemaVersion": None,  # no schema declared
        "notifyUrl": local_stack.notify.url,  # where an idle consumer may wait (issue 16)
    }

    produced = run("produce_json")
    ledger = produced.json["ledgerId"]  # epoch-ms based, never another incarnation's
    run.ledger = str(ledger)
    assert (produced.status, produced.json) == (
        200,
        {
            "messageIds": [f"{ledger}:0:-1:-1"],
            "ledgerId": ledger,
            "entryId": 0,
            "partition": -1,
            "topic": run.full_topic,
            "duplicate": False,
        },
    )
    entry = run("produce_entry")
    assert (entry.status, entry.json["messageIds"]) == (200, [f"{ledger}:1:-1:-1"])
    bad = run("produce_bad_topic")
    assert (bad.status, bad.error()) == (400, "InvalidTopicName")

    received = run("receive", consumer_id=consumer)
    assert received.status == 200
    messages = received.json["messages"]
    json_message = json.loads(sample_body("produce_json"))["messages"][0]
    entry_payload = decode_entry(base64.b64decode(sample_body("produce_entry"))).messages[0]
    assert [m["messageId"] for m in messages] == [f"{ledger}:0:-1:-1", f"{ledger}:1:-1:-1"]
    assert [m["payload"] for m in messages] == [
        json_message["payload"],
        base64.b64encode(entry_payload.payload).decode(),
    ]
    assert [m["key"] for m in messages] == ["order-41", "order-42"]
    assert [m["producerName"] for m in messages] == ["demo-producer", "demo-producer"]
    assert messages[0]["properties"] == {"source": "rest-demo"}
    assert [m["redeliveryCount"] for m in messages] == [0, 0]
    assert all(m["topic"] == run.full_topic for m in messages)

    acked = run("ack", consumer_id=consumer)
    assert (acked.status, acked.json) == (200, {"acknowledged": 1})
    refused = run("ack_cumulative_on_shared", consumer_id=consumer)
    assert (refused.status, refused.error()) == (400, "CumulativeAcknowledgementNotAllowedError")
    nacked = run("nack", consumer_id=consumer)
    assert (nacked.status, nacked.json) == (200, {"redelivered": 1})

    again = run("receive", consumer_id=consumer)
    assert [(m["messageId"], m["redeliveryCount"]) for m in again.json["messages"]] == [
        (f"{ledger}:1:-1:-1", 1)
    ]
    redelivered = run("redeliver", consumer_id=consumer)
    assert (redelivered.status, redelivered.json) == (200, {"redelivered": 1})

    stats = run("admin_stats")
    assert stats.status == 200
    assert stats.json["msgInCounter"] == 2 and stats.json["lastMessageId"] == f"{ledger}:1:-1:-1"
    subscription = stats.json["subscriptions"]["demo"]
    assert subscription["type"] == "Shared"
    assert subscription["msgBacklog"] == 1 and subscription["markDeletePosition"] == f"{ledger}:0"
    assert [c["consumerId"] for c in subscription["consumers"]] == [consumer]
    last = run("admin_last_message_id")
    assert (last.status, last.json["messageId"], last.json["entryId"]) == (
        200,
        f"{ledger}:1:-1:-1",
        1,
    )
    seeked = run("seek", consumer_id=consumer)
    assert (seeked.status, seeked.json) == (200, {"seeked": True})
    replayed = run("receive", consumer_id=consumer)
    assert [m["messageId"] for m in replayed.json["messages"]] == [
        f"{ledger}:0:-1:-1",
        f"{ledger}:1:-1:-1",
    ]
    listed = run("admin_subscriptions")
    assert (listed.status, listed.json) == (200, ["demo"])

    closed = run("close_consumer", consumer_id=consumer)
    assert (closed.status, closed.json) == (200, {"closed": True})
    after_close = run("receive", consumer_id=consumer)
    assert (after_close.status, after_close.error()) == (404, "ConsumerNotFound")

    assert run("admin_delete_subscription").status == 204
    assert run("admin_subscriptions").json == []
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_exclusive_subscribe_event_holds_the_subscription_until_unsubscribe_deletes_it(
    local_stack,
):
    run = Replay(local_stack, EXCLUSIVE_EVENTS)

    first = run("subscribe_exclusive")
    assert first.status == 200
    assert first.json["consumerName"] == "demo-exclusive-consumer"
    busy = run("subscribe_exclusive")
    assert (busy.status, busy.error()) == (409, "ConsumerBusy")
    alive = run("consumer_heartbeat", consumer_id=first.json["consumerId"])
    assert (alive.status, alive.json) == (200, {"alive": True})

    gone = run("unsubscribe", consumer_id=first.json["consumerId"])
    assert (gone.status, gone.json) == (200, {"unsubscribed": True})
    stale = run("unsubscribe", consumer_id=first.json["consumerId"])
    assert (stale.status, stale.error()) == (404, "SubscriptionNotFound")
    orphan = run("consumer_heartbeat", consumer_id=first.json["consumerId"])
    assert (orphan.status, orphan.error()) == (404, "SubscriptionNotFound")
    second = run("subscribe_exclusive")
    assert second.status == 200 and second.json["consumerId"] != first.json["consumerId"]
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_producer_events_take_heartbeat_and_release_an_exclusive_lease_then_upload(
    local_stack,
):
    run = Replay(local_stack, PRODUCER_EVENTS)

    # a fresh topic: the first exclusive producer opens epoch 1 (the heartbeat and release
    # samples send ?epoch=1)
    exclusive = run("producers_register_exclusive")
    assert exclusive.status == 200
    assert exclusive.json == {
        "producerName": "demo-producer",
        "epoch": 1,
        "lastSequenceId": -1,
        "maxMessageSize": exclusive.json["maxMessageSize"],
        "deduplication": exclusive.json["deduplication"],
        "leaseMs": 30000,
        "topic": run.full_topic,
        "schemaVersion": None,  # no schema declared
    }
    assert isinstance(exclusive.json["maxMessageSize"], int)
    assert isinstance(exclusive.json["deduplication"], bool)
    other = json.dumps({"producerName": "demo-other-producer", "accessMode": "Exclusive"})
    fenced = run("producers_register_exclusive", body=other)
    assert (fenced.status, fenced.error()) == (409, "ProducerFenced")
    shared_while_held = run("producers_register_shared")
    assert (shared_while_held.status, shared_while_held.error()) == (409, "ProducerFenced")

    beat = run("producers_heartbeat")
    assert (beat.status, beat.json) == (200, {"epoch": 1})
    released = run("producers_release")
    assert (released.status, released.json) == (200, {"released": True})
    again = run("producers_release")
    assert (again.status, again.json) == (200, {"released": False})
    lost = run("producers_heartbeat")
    assert (lost.status, lost.error()) == (409, "ProducerFenced")

    shared = run("producers_register_shared")
    assert shared.status == 200
    assert shared.json["producerName"] == "demo-shared-producer"
    assert shared.json["epoch"] == 2 and shared.json["lastSequenceId"] == -1
    assert shared.json["topic"] == run.full_topic

    upload = run("produce_upload")
    assert upload.status == 200
    assert set(upload.json) == {"uploadUrl", "entryRef", "expiresInSeconds"}
    prefix = f"entries/persistent/public/default/{run.topic}/"
    assert upload.json["entryRef"].startswith(prefix)
    assert len(upload.json["entryRef"]) > len(prefix)
    assert upload.json["expiresInSeconds"] == 900
    url = urlsplit(upload.json["uploadUrl"])
    assert url.scheme in ("http", "https") and url.query
    assert unquote(url.path).endswith("/" + upload.json["entryRef"]) or (
        unquote(url.path).lstrip("/") == upload.json["entryRef"]
    )

    assert run("admin_set_topic_deduplication").status == 204
    enabled = run("admin_get_topic_deduplication")
    assert (enabled.status, enabled.json) == (200, True)
    deduplicated = run("producers_register_shared")
    assert deduplicated.status == 200
    assert deduplicated.json["deduplication"] is True
    assert deduplicated.json["lastSequenceId"] == -1
    run.assert_ran_everything()
