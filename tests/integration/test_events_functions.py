"""The trigger and function sample events replayed (``event_replay``): each created, shown, listed
and deleted, with the subscription or trigger it owns."""

from __future__ import annotations

import pytest
from event_replay import Replay
from event_scenarios import FUNCTION_EVENTS, TRIGGER_EVENTS

from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_wire.names import TopicName


@pytest.mark.emulator
def test_the_trigger_events_create_show_list_and_delete_a_trigger_with_its_subscription(
    local_stack, engine_clients
):
    run = Replay(local_stack, TRIGGER_EVENTS)
    missing = run("admin_get_trigger")  # its topic does not exist yet
    assert (missing.status, missing.error()) == (404, "TopicNotFound")
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    topic = TopicName.parse(run.full_topic)
    bad = run("admin_put_trigger", body='{"target": {"type": "lambda"}, "batchSize": 0}')
    assert (bad.status, bad.error()) == (400, "InvalidMessage")
    assert str(topic) not in engine.admin.list_topics(topic, False)  # the bad body created nothing
    absent = run("admin_put_trigger")  # its Lambda target does not exist yet
    assert (absent.status, absent.error()) == (404, "NotFound")
    assert str(topic) not in engine.admin.list_topics(topic, False)
    local_stack.functions.register("demo-function", lambda event, context: None)
    created = run("admin_put_trigger")  # creates the topic too, as subscribing does
    assert created.status == 200
    assert created.json["target"] == {"type": "lambda", "function": "demo-function"}
    shown = run("admin_get_trigger")
    assert (shown.status, shown.json["batchSize"]) == (200, 10)
    assert run("admin_list_triggers").json == ["demo-trigger"]
    assert "demo-trigger" in engine.admin.stats(topic, partitioned=False)["subscriptions"]
    assert run("admin_delete_trigger").status == 204
    gone = run("admin_get_trigger")
    assert (gone.status, gone.error()) == (404, "NotFound")
    assert "demo-trigger" not in engine.admin.stats(topic, partitioned=False)["subscriptions"]
    run.assert_ran_everything()


@pytest.mark.emulator
def test_the_function_events_create_show_list_and_delete_a_function_with_its_trigger(
    local_stack, engine_clients
):
    run = Replay(local_stack, FUNCTION_EVENTS)
    bad = run("admin_put_function", body='{"className": "9Module", "code": "x", "inputs": []}')
    assert (bad.status, bad.error()) == (400, "InvalidMessage") and "'className'" in bad.text
    assert run("admin_list_functions").json == []  # the bad body stored nothing
    created = run("admin_put_function")
    assert created.status == 200 and "code" not in created.json
    assert created.json["inputs"] == ["persistent://public/default/events-demo-fn-in"]
    engine = Engine.build(Settings.from_env(local_stack.environment), clients=engine_clients)
    inputs, trigger = TopicName.parse("events-demo-fn-in"), f"public.{run.namespace}.demo-function"
    assert trigger in engine.triggers.names(inputs)
    again = run("admin_register_function")  # the same definition again: nothing changes
    assert again.status == 200 and again.json["name"] == "demo-function"
    shown = run("admin_get_function")
    assert (shown.status, shown.json["className"]) == (200, "exclaim.Exclaim")
    assert run("admin_list_functions").json == ["demo-function"]
    status = run("admin_function_status")
    restarts = status.json["instances"][0]["status"]["numRestarts"]
    assert (status.status, status.json["numInstances"], restarts) == (200, 1, 0)
    stats = run("admin_function_stats")
    assert (stats.status, stats.json["receivedTotal"]) == (200, 0)
    assert run("admin_stop_function").status == 204
    stopped = run("admin_trigger_function")  # a stopped function takes no trigger
    assert (stopped.status, stopped.error()) == (503, "ServiceUnitNotReady")
    assert run("admin_start_function").status == 204
    assert run("admin_restart_function").status == 204
    assert run("admin_function_status").json["instances"][0]["status"]["numRestarts"] == 1
    assert run("admin_put_function_state").status in (200, 204)
    state = run("admin_get_function_state")
    assert (state.status, state.json["stringValue"]) == (200, "hello")
    assert run("admin_incr_function_counter").json == {"key": "seen", "numberValue": 1}
    assert run("admin_get_function_counter").json == {"key": "seen", "numberValue": 1}
    assert run("admin_delete_function_counter").status == 204
    assert run("admin_get_function_counter").json == {"key": "seen", "numberValue": 0}
    assert run("admin_delete_function").status == 204
    gone = run("admin_get_function")
    assert (gone.status, gone.error()) == (404, "NotFound")
    assert trigger not in engine.triggers.names(inputs)
    run.assert_ran_everything()
