"""The policy sample events replayed (``event_replay``): namespace and topic policies
(deduplication, the maximum size, delayed delivery, retention and message TTL), compaction runs,
backlog quotas and rates."""

from __future__ import annotations

import json
import time

import pytest
from event_replay import Replay, call, replay_rates, sample_body
from event_scenarios import (
    COMPACTION_EVENTS,
    DELAYED_DELIVERY_EVENTS,
    NAMESPACE_EVENTS,
    NAMESPACE_QUOTA_EVENTS,
    RETENTION_EVENTS,
    TOPIC_POLICY_EVENTS,
    TOPIC_QUOTA_EVENTS,
)

from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName


@pytest.mark.emulator
def test_the_namespace_policy_events_set_and_read_deduplication_and_the_maximum_size(
    local_stack,
):
    run = Replay(local_stack, NAMESPACE_EVENTS)

    off = run("admin_get_namespace_deduplication")
    assert (off.status, off.json) == (200, False)
    assert run("admin_set_namespace_deduplication").status == 204
    on = run("admin_get_namespace_deduplication")
    assert (on.status, on.json) == (200, True)
    not_a_flag = run("admin_set_namespace_deduplication", body='"yes"')
    assert (not_a_flag.status, not_a_flag.error()) == (400, "InvalidMessage")
    assert run("admin_remove_namespace_deduplication").status == 204
    assert run("admin_get_namespace_deduplication").json is False

    default = run("admin_get_max_message_size")
    assert (default.status, default.json) == (200, 5 * 1024 * 1024)
    assert run("admin_set_max_message_size").status == 204
    limit = run("admin_get_max_message_size")
    assert (limit.status, limit.json) == (200, 1048576)
    for bad in ("abc", "10", "104857601", "true", "1048576.5"):
        refused = run("admin_set_max_message_size", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_max_message_size").json == 1048576
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_policy_events_set_read_and_remove_delayed_delivery(local_stack):
    run = Replay(local_stack, DELAYED_DELIVERY_EVENTS)
    settings = Settings.from_env(local_stack.environment)
    defaults = {
        "active": settings.delayed_delivery_enabled,
        "tickTime": settings.delayed_delivery_tick_ms,
        "maxDeliveryDelayInMillis": 0,
    }

    fresh = run("admin_get_delayed_delivery")
    assert (fresh.status, fresh.json) == (200, defaults)
    assert run("admin_set_delayed_delivery").status == 204
    stored = run("admin_get_delayed_delivery")
    sample = json.loads(sample_body("admin_set_delayed_delivery"))
    assert (stored.status, stored.json) == (200, sample)
    for bad in ('{"active": "no"}', '{"active": true, "tickTime": 0}', "true", '{"tick": 1}'):
        refused = run("admin_set_delayed_delivery", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_delayed_delivery").json == stored.json
    assert run("admin_remove_delayed_delivery").status == 204
    assert run("admin_get_delayed_delivery").json == defaults
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_policy_events_set_read_and_remove_retention_and_message_ttl(
    local_stack,
):
    run = Replay(local_stack, RETENTION_EVENTS)

    assert run("admin_get_namespace_retention").json == {
        "retentionTimeInMinutes": 0,
        "retentionSizeInMB": 0,
    }
    assert run("admin_set_namespace_retention").status == 204
    retention = run("admin_get_namespace_retention")
    sample = json.loads(sample_body("admin_set_namespace_retention"))
    assert (retention.status, retention.json) == (200, sample)
    one_zero = '{"retentionTimeInMinutes": 0, "retentionSizeInMB": 10}'
    for bad in (one_zero, '{"retentionTimeInMinutes": -2, "retentionSizeInMB": 1}', "60"):
        refused = run("admin_set_namespace_retention", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_namespace_retention").json == sample
    assert run("admin_remove_namespace_retention").status == 204
    assert run("admin_get_namespace_retention").json == {
        "retentionTimeInMinutes": 0,
        "retentionSizeInMB": 0,
    }

    assert run("admin_get_namespace_message_ttl").json == 0
    assert run("admin_set_namespace_message_ttl").status == 204
    ttl = run("admin_get_namespace_message_ttl")
    assert (ttl.status, ttl.json) == (200, 3600)
    for bad in ("-1", '"3600"', "1.5", "2147483648"):
        refused = run("admin_set_namespace_message_ttl", body=bad)
        assert (refused.status, refused.error()) == (400, "InvalidMessage"), bad
    assert run("admin_get_namespace_message_ttl").json == 3600
    assert run("admin_remove_namespace_message_ttl").status == 204
    assert run("admin_get_namespace_message_ttl").json == 0
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_topic_policy_events_override_the_namespace_retention_and_message_ttl(
    local_stack, engine_clients
):
    run = Replay(local_stack, TOPIC_POLICY_EVENTS)
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    topic = TopicName.parse(run.full_topic)

    unknown = run("admin_set_topic_retention")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")
    engine.admin.create_topic(topic, None)

    assert run("admin_set_topic_retention").status == 204
    retention = run("admin_get_topic_retention")
    sample = json.loads(sample_body("admin_set_topic_retention"))
    assert (retention.status, retention.json) == (200, sample)
    assert run("admin_remove_topic_retention").status == 204
    inherited = run("admin_get_topic_retention")  # ?applied=true: the namespace's
    assert inherited.json == engine.namespaces.retention("public", "default").to_body()

    assert run("admin_set_topic_message_ttl").status == 204  # ?messageTTL=600
    ttl = run("admin_get_topic_message_ttl")
    assert (ttl.status, ttl.json) == (200, 600)
    query_wins = run("admin_set_topic_message_ttl", body="-5")
    assert query_wins.status == 204 and run("admin_get_topic_message_ttl").json == 600
    assert run("admin_remove_topic_message_ttl").status == 204
    assert run("admin_get_topic_message_ttl").json == engine.namespaces.message_ttl(
        "public", "default"
    )
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_compaction_events_start_a_run_report_it_running_then_done(
    local_stack, jobs_in_process, engine_clients
):
    jobs_in_process.hold()  # the run waits until it has been seen RUNNING
    run = Replay(local_stack, COMPACTION_EVENTS)
    unknown = run("admin_compaction_status")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    engine.admin.create_topic(TopicName.parse(run.full_topic), None)
    fresh = run("admin_compaction_status")
    assert (fresh.status, fresh.json) == (200, {"status": "NOT_RUN", "lastError": ""})
    message = EntryMessage(payload=b"v", sequence_id=0, publish_time_ms=1, key="k")
    engine.producer.publish(
        TopicName.parse(run.full_topic), encode_entry([message], producer_name="p")
    )
    assert run("admin_trigger_compaction").status == 204
    assert run("admin_compaction_status").json == {"status": "RUNNING", "lastError": ""}
    again = run("admin_trigger_compaction")
    assert (again.status, again.error()) == (409, "Conflict")
    assert again.json["message"].startswith("Compaction already in progress")
    [(job, args)] = jobs_in_process.started
    assert (job, args["topic"]) == ("compact-topic", run.full_topic)
    jobs_in_process.release()
    deadline = time.monotonic() + 240
    while run("admin_compaction_status").json["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the local compact-topic run did not finish"
        time.sleep(0.1)  # the launcher's background run reports through the pointer item
    assert run("admin_compaction_status").json == {"status": "SUCCESS", "lastError": ""}
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_quota_events_set_read_and_remove_a_backlog_quota_and_each_rate(
    local_stack,
):
    run = Replay(local_stack, NAMESPACE_QUOTA_EVENTS)
    assert run("admin_get_namespace_backlog_quotas").json == {}
    assert run("admin_set_namespace_backlog_quota").status == 204  # destination_storage
    quota = json.loads(sample_body("admin_set_namespace_backlog_quota"))
    shown = run("admin_get_namespace_backlog_quotas")
    assert (shown.status, shown.json) == (200, {"destination_storage": quota})
    bad = run("admin_set_namespace_backlog_quota", body='{"limitSize": 1, "policy": "drop"}')
    assert (bad.status, bad.error()) == (400, "InvalidMessage")
    assert run("admin_remove_namespace_backlog_quota").status == 204
    assert run("admin_get_namespace_backlog_quotas").json == {}

    retention = {"retentionTimeInMinutes": -1, "retentionSizeInMB": 50}  # below the 100 MiB
    namespace_url = f"{local_stack.url}/admin/v2/namespaces/public/{run.namespace}"
    assert call(f"{namespace_url}/retention", "POST", retention) == 204
    beyond = run("admin_set_namespace_backlog_quota")
    assert (beyond.status, beyond.error()) == (412, "PreconditionFailed")
    assert run("admin_get_namespace_backlog_quotas").json == {}

    not_a_rate = run("admin_set_namespace_publish_rate", body='{"publishThrottlingRateInMsg": "x"}')
    assert (not_a_rate.status, not_a_rate.error()) == (400, "InvalidMessage")
    replay_rates(run, "namespace")
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_topic_quota_events_set_read_and_remove_a_backlog_quota_and_each_rate(local_stack):
    run = Replay(local_stack, TOPIC_QUOTA_EVENTS, create_namespace=False)
    unknown = run("admin_set_topic_backlog_quota")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")
    topic_url = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}"
    assert call(topic_url, "PUT") == 204

    assert run("admin_get_topic_backlog_quotas").json == {}
    assert run("admin_set_topic_backlog_quota").status == 204  # message_age
    quota = json.loads(sample_body("admin_set_topic_backlog_quota"))
    shown = run("admin_get_topic_backlog_quotas")
    assert (shown.status, shown.json) == (200, {"message_age": quota})
    assert run("admin_remove_topic_backlog_quota").status == 204
    assert run("admin_get_topic_backlog_quotas").json == {}

    retention = {"retentionTimeInMinutes": 30, "retentionSizeInMB": -1}  # below the 3600 s
    assert call(f"{topic_url}/retention", "POST", retention) == 204
    beyond = run("admin_set_topic_backlog_quota")
    assert (beyond.status, beyond.error()) == (412, "PreconditionFailed")
    assert run("admin_get_topic_backlog_quotas").json == {}

    replay_rates(run, "topic")
    run.assert_ran_everything()
