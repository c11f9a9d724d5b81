"""The admin sample events replayed (``event_replay``): tenants and namespaces with their grants,
the subscription and topic verbs, the schema registry, the console."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest
from event_replay import Replay, call
from event_scenarios import (
    CONSOLE_EVENTS,
    NAMESPACE_SUBSCRIPTION_EVENTS,
    SCHEMA_EVENTS,
    SUBSCRIPTION_VERB_EVENTS,
    TENANCY_EVENTS,
    TOPIC_VERB_EVENTS,
)


@pytest.mark.emulator
def test_the_tenancy_events_create_a_tenant_and_namespace_grant_and_revoke_then_delete_them(
    local_stack,
):
    run = Replay(local_stack, TENANCY_EVENTS, create_namespace=False)
    namespace = f"{run.tenant}/{run.namespace}"

    assert (run("tenancy_list_clusters").json) == ["magnetar"]
    assert "public" in run("tenancy_list_tenants").json
    assert run("tenancy_create_tenant").status == 204
    again = run("tenancy_create_tenant")
    assert (again.status, again.error()) == (409, "Conflict")
    assert run("tenancy_get_tenant").json == {
        "adminRoles": ["demo-admin"], "allowedClusters": ["magnetar"]}  # fmt: skip
    assert run("tenancy_update_tenant").status == 204
    assert run("tenancy_list_namespaces").json == []
    assert run("tenancy_create_namespace").status == 204
    assert run("tenancy_list_namespaces").json == [namespace]
    assert run("tenancy_get_namespace").json["replication_clusters"] == ["magnetar"]
    assert run("tenancy_namespace_topics").json == []

    assert run("tenancy_grant_namespace_permission").status == 204
    assert run("tenancy_namespace_permissions").json == {"demo-role": ["consume", "produce"]}
    assert run("tenancy_grant_subscription_permission").status == 204
    assert run("tenancy_subscription_permissions").json == {"demo": ["demo-role"]}
    assert run("tenancy_revoke_subscription_permission").status == 204
    gone = run("tenancy_revoke_subscription_permission")
    assert (gone.status, gone.error()) == (412, "PreconditionFailed")
    assert run("tenancy_grant_topic_permission").status == 204
    assert run("tenancy_topic_permissions").json == {"demo-role": ["consume", "produce"]}
    assert run("tenancy_revoke_topic_permission").status == 204
    assert run("tenancy_revoke_namespace_permission").status == 204
    assert run("tenancy_namespace_permissions").json == {}

    assert run("tenancy_delete_namespace").status == 204
    missing = run("tenancy_get_namespace")
    assert (missing.status, missing.error()) == (404, "NotFound")
    assert run("tenancy_delete_tenant").status == 204
    assert run.tenant not in run("tenancy_list_tenants").json
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_subscription_verb_events_create_reset_skip_clear_and_expire_a_subscription(
    local_stack,
):
    run = Replay(local_stack, SUBSCRIPTION_VERB_EVENTS)
    missing = run("admin_create_subscription")
    assert (missing.status, missing.error()) == (404, "TopicNotFound")
    for n in range(3):  # entries 0, 1, 2 of the topic's ledger
        body = json.dumps({"messages": [{"payload": base64.b64encode(b"m%d" % n).decode()}]})
        request = urllib.request.Request(
            f"{local_stack.url}/v1/persistent/public/default/{run.topic}/messages",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
            run.ledger = str(json.loads(answer.read())["ledgerId"])

    def backlog() -> int:
        url = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}/stats"
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.loads(answer.read())["subscriptions"]["demo"]["msgBacklog"]

    assert run("admin_create_subscription").status == 204  # at earliest
    again = run("admin_create_subscription")
    assert (again.status, again.error()) == (409, "Conflict")
    assert backlog() == 3
    peeked = run("admin_peek_message")  # position 1 of the backlog, consuming nothing
    assert (peeked.status, peeked.text, peeked.headers["x-pulsar-message-id"]) == (
        200,
        "m0",
        f"{run.ledger}:0",
    )
    examined = run("admin_examine_message")  # earliest, position 2
    assert (examined.status, examined.text) == (200, "m1")
    by_id = run("admin_get_message_by_id")  # entry 2
    assert (by_id.status, by_id.text) == (200, "m2")
    assert backlog() == 3
    assert run("admin_skip_messages").status == 204 and backlog() == 2
    assert run("admin_skip_all").status == 204 and backlog() == 0
    assert run("admin_reset_cursor_to_time").status == 204 and backlog() == 3
    assert run("admin_reset_cursor_to_message_id").status == 204 and backlog() == 2
    assert run("admin_expire_messages").status == 204 and backlog() == 2  # none an hour old
    assert run("admin_expire_all_subscriptions").status == 204 and backlog() == 0
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_namespace_subscription_events_clear_backlogs_and_unsubscribe_across_topics(
    local_stack,
):
    run = Replay(local_stack, NAMESPACE_SUBSCRIPTION_EVENTS)
    admin = f"{local_stack.url}/admin/v2/persistent/public/{run.namespace}"

    def send(method: str, url: str, body: object) -> bytes:
        request = urllib.request.Request(
            url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method=method
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status in (200, 204)
            return answer.read()

    def backlogs(topic: str) -> dict[str, int]:
        with urllib.request.urlopen(f"{admin}/{topic}/stats", timeout=30) as answer:
            subscriptions = json.loads(answer.read())["subscriptions"]
        return {name: sub["msgBacklog"] for name, sub in subscriptions.items()}

    for topic in ("t1", "t2"):
        message = {"payload": base64.b64encode(b"m").decode()}
        url = f"{local_stack.url}/v1/persistent/public/{run.namespace}/{topic}/messages"
        send("POST", url, {"messages": [message]})
        send("POST", url, {"messages": [message]})
        for sub in ("demo", "other"):
            send("PUT", f"{admin}/{topic}/subscription/{sub}", {"ledgerId": -1, "entryId": -1})
    assert run("admin_clear_namespace_subscription_backlog").status == 204
    assert backlogs("t1") == backlogs("t2") == {"demo": 0, "other": 2}
    assert run("admin_clear_namespace_backlog").status == 204
    assert backlogs("t1") == backlogs("t2") == {"demo": 0, "other": 0}
    assert run("admin_unsubscribe_namespace").status == 204
    assert set(backlogs("t1")) == set(backlogs("t2")) == {"other"}
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_topic_verb_events_grow_terminate_truncate_and_unload_topics(local_stack):
    run = Replay(local_stack, TOPIC_VERB_EVENTS)
    admin = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}"
    produce = f"{local_stack.url}/v1/persistent/public/default/{run.topic}/messages"
    message = {"messages": [{"payload": base64.b64encode(b"m").decode()}]}

    def send(method: str, url: str, body: object) -> tuple[int, dict]:
        request = urllib.request.Request(
            url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    assert send("PUT", f"{admin}-partitioned/partitions", 3)[0] == 204
    assert send("POST", produce, message)[0] == 200
    assert send("PUT", f"{admin}/subscription/demo", {"ledgerId": -1, "entryId": -1})[0] == 204
    assert run("admin_update_partitions").status == 204
    assert send("GET", f"{admin}-partitioned/partitions", None)[1] == {"partitions": 4}
    terminated = run("admin_terminate_partitions")
    assert (terminated.status, sorted(terminated.json)) == (200, ["0", "1", "2", "3"])
    assert run("admin_truncate").status == 204
    assert send("GET", f"{admin}/stats", None)[1]["subscriptions"]["demo"]["msgBacklog"] == 0
    last = run("admin_terminate")
    assert (last.status, last.json["entryId"]) == (200, 0)
    assert run("admin_unload").status == 204
    status, refused = send("POST", produce, message)
    assert (status, refused["error"]) == (409, "TopicTerminated")
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_schema_events_register_read_test_and_delete_a_schema_under_a_strategy(local_stack):
    run = Replay(local_stack, SCHEMA_EVENTS)
    assert run("admin_get_schema_compatibility_strategy").json == "UNDEFINED"
    assert run("admin_set_schema_compatibility_strategy").status == 204
    assert run("admin_get_schema_compatibility_strategy").json == "BACKWARD"
    bad = run("admin_set_schema_compatibility_strategy", body='"LOOSE"')
    assert (bad.status, bad.error()) == (400, "InvalidMessage")

    posted = run("admin_post_schema")
    assert (posted.status, posted.json) == (200, {"version": {"version": 0}})
    assert run("admin_post_schema").json == {"version": {"version": 0}}  # equal: same version
    latest = run("admin_get_schema")
    assert (latest.status, latest.json["version"], latest.json["type"]) == (200, 0, "AVRO")
    assert run("admin_get_schema_version").json == latest.json
    assert [v["version"] for v in run("admin_get_all_schemas").json["getSchemaResponses"]] == [0]
    assert run("admin_get_schema_version_of").json == {"version": 0}
    check = run("admin_test_schema_compatibility")
    assert check.json == {"compatibility": False, "schemaCompatibilityStrategy": "BACKWARD"}
    assert run("admin_delete_schema").json == {"version": 1}
    gone = run("admin_get_schema")
    assert (gone.status, gone.error()) == (404, "NotFound")

    assert run("admin_get_allow_auto_update_schema").json is True
    assert run("admin_set_allow_auto_update_schema").status == 204
    assert run("admin_get_allow_auto_update_schema").json is False
    assert run("admin_get_schema_validation_enforced").json is False
    assert run("admin_set_schema_validation_enforced").status == 204
    assert run("admin_get_schema_validation_enforced").json is True
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_console_events_serve_the_page_its_script_and_a_topics_history(local_stack):
    run = Replay(local_stack, CONSOLE_EVENTS, create_namespace=False)
    page = run("console_page")
    assert (page.status, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert "console.js" in page.text
    script = run("console_file")
    assert (script.status, script.headers["content-type"]) == (
        200,
        "text/javascript; charset=utf-8",
    )
    unknown = run("console_history")
    assert (unknown.status, unknown.error()) == (404, "TopicNotFound")

    produce = f"{local_stack.url}/v1/persistent/public/default/{run.topic}/messages"
    message = {"messages": [{"payload": base64.b64encode(b"m").decode()}]}
    assert call(produce, "POST", message) == 200
    subscription = f"{local_stack.url}/admin/v2/persistent/public/default/{run.topic}"
    earliest = {"ledgerId": -1, "entryId": -1}
    assert call(f"{subscription}/subscription/demo", "PUT", earliest) == 204
    history = run("console_history")
    assert (history.status, history.json["topic"]) == (200, run.full_topic)
    assert history.json["series"]["msgBacklog"][-1][1] == 1  # now's backlog of demo
    run.assert_ran_everything()
