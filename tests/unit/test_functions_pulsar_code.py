"""Pulsar Functions written as Pulsar's docs write them, on the memory service: the class
form with ``from pulsar import Function``, native ``def process(input)`` functions, a class
of an unknown base refused as a load error that status, the log and the dead letter policy
show; status and stats counters; stop and start; trigger."""

from __future__ import annotations

import json
import logging
import sys
import textwrap
import types
import urllib.error
import urllib.request

import pytest

from magnetar.cli.functions import parser, request
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain import metering
from magnetar_core.domain.errors import InvalidMessage, ServiceUnitNotReady
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_core.services.functions.stats import BatchReport
from magnetar_core.services.triggers.delivery import records_of
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

IN = TopicName.parse("persistent://public/default/words")
OUT = TopicName.parse("persistent://public/default/loud")
DLQ = TopicName.parse("persistent://public/default/words-dlq")
EXCLAMATION = textwrap.dedent("""
    from pulsar import Function

    class ExclamationFunction(Function):
        def __init__(self):
            pass

        def process(self, input, context):
            if input == "boom":
                raise ValueError("no booms here")
            return input + '!'
""")
NATIVE = textwrap.dedent("""
    def process(input):
        return "This function has been triggered with a value of {0}".format(input)
""")
FOREIGN = textwrap.dedent("""
    import collections

    class Counted(collections.UserDict):
        def process(self, input, context):
            return input
""")


@pytest.fixture
def engine() -> Engine:
    """A memory engine whose sleeps run the functions' triggers (what ``trigger`` waits on
    is done while it waits)."""
    holder: list[Engine] = []
    runtime = Runtime(sleep_ms=lambda _ms: run(holder[0]))
    holder.append(Engine.assemble(memory_settings(), memory_stores(), runtime))
    holder[0].tenants.initialize_cluster()
    return holder[0]


def create(engine: Engine, code: str, class_name: str, name: str = "f", **extra: object) -> None:
    body = {"className": class_name, "code": code, "inputs": [str(IN)], "output": str(OUT), **extra}  # fmt: skip
    engine.functions.put("public", "default", name, body)


def produce(engine: Engine, *payloads: str) -> None:
    for i, text in enumerate(payloads):
        message = EntryMessage(payload=text.encode(), sequence_id=i, publish_time_ms=1)
        engine.producer.publish(IN, encode_entry([message], producer_name="p"))


def run(engine: Engine) -> None:
    """Delivery steps of every trigger on the input until one moves nothing."""
    for trigger in engine.triggers.of_topic(IN):
        for _ in range(50):
            outcome = engine.delivery.deliver_once(trigger)
            if not (outcome.acknowledged or outcome.retried):
                break


def payloads(engine: Engine, topic: TopicName) -> list[str]:
    subs, name = engine.subscriptions, f"check-{len(engine.topics.list('public/default'))}"
    handle = subs.subscribe(topic, name, "c", "Shared", True)
    return [r.payload.decode() for r in records_of(subs.receive(topic, name, handle.consumer_id, 1000, 0))]  # fmt: skip


def status(engine: Engine, name: str = "f") -> dict:
    return engine.functions.control.status("public", "default", name)["instances"][0]["status"]


def test_a_class_written_with_from_pulsar_import_function_runs_as_pulsar_documents_it(engine):
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")
    produce(engine, "hello", "world")
    run(engine)

    assert payloads(engine, OUT) == ["hello!", "world!"]
    assert "pulsar" not in sys.modules  # the alias lives in the function's module only
    assert status(engine)["numSuccessfullyProcessed"] == 2


def test_a_pulsar_client_of_the_process_is_neither_used_by_the_function_nor_shadowed(engine, monkeypatch):  # fmt: skip
    real = types.ModuleType("pulsar")
    real.Function = type("Function", (), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pulsar", real)
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")
    produce(engine, "hello")
    run(engine)

    assert payloads(engine, OUT) == ["hello!"]
    assert sys.modules["pulsar"] is real


def test_pulsars_module_paths_and_the_sdk_name_give_the_same_api_inside_a_function(engine):
    code = textwrap.dedent("""
        import pulsar
        import magnetar
        from pulsar.functions.function import Function
        from pulsar.functions.context import Context

        class Same(Function):
            def process(self, input, context):
                same = Function is pulsar.Function is magnetar.Function and isinstance(context, Context)
                return f"{input} {same}"
    """)
    create(engine, code, "same.Same")
    produce(engine, "x")
    run(engine)

    assert payloads(engine, OUT) == ["x True"]


@pytest.mark.parametrize("class_name", ["myfunc", "myfunc.process"])
def test_a_native_function_is_called_with_the_input_and_its_return_value_published(engine, class_name):  # fmt: skip
    create(engine, NATIVE, class_name)  # myfunc: the module, as Pulsar's docs name it
    produce(engine, "hi")
    run(engine)

    assert payloads(engine, OUT) == ["This function has been triggered with a value of hi"]


def test_a_bare_module_name_without_a_process_function_is_a_load_error(engine):
    create(engine, EXCLAMATION, "exclamation", maxMessageRetries=1, deadLetterTopic=str(DLQ))
    produce(engine, "hi")
    run(engine)

    assert "module exclamation has no function process" in status(engine)["error"]


def test_a_class_of_an_unknown_base_is_a_load_error_in_status_and_log_and_dead_letters(engine, caplog):  # fmt: skip
    create(engine, FOREIGN, "counted.Counted", maxMessageRetries=1, deadLetterTopic=str(DLQ))
    produce(engine, "a")
    with caplog.at_level(logging.WARNING, logger="magnetar.functions"):
        run(engine)

    got = status(engine)
    assert got["numSystemExceptions"] >= 2 and got["numSuccessfullyProcessed"] == 0
    assert "subclasses collections.UserDict, not pulsar.Function" in got["error"]
    assert got["latestSystemExceptions"][-1]["exceptionString"] == got["error"]
    assert "not pulsar.Function" in caplog.text
    assert payloads(engine, DLQ) == ["a"] and payloads(engine, OUT) == []


def test_status_and_stats_count_received_processed_and_user_exceptions_with_their_message(engine):  # fmt: skip
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction", maxMessageRetries=1, deadLetterTopic=str(DLQ))  # fmt: skip
    produce(engine, "a", "boom", "b")
    run(engine)

    got = status(engine)  # boom: tried twice, then dead-lettered
    assert payloads(engine, DLQ) == ["boom"]
    assert (got["numReceived"], got["numSuccessfullyProcessed"], got["numUserExceptions"]) == (4, 2, 2)  # fmt: skip
    assert got["latestUserExceptions"][0]["exceptionString"] == "ValueError: no booms here"
    assert got["running"] and got["numSystemExceptions"] == 0 and got["lastInvocationTime"] > 0
    stats = engine.functions.control.stats("public", "default", "f")
    assert (stats["receivedTotal"], stats["processedSuccessfullyTotal"], stats["userExceptionsTotal"]) == (4, 2, 2)  # fmt: skip
    assert stats["avgProcessLatency"] > 0
    assert stats["instances"][0]["metrics"]["receivedTotal"] == 4


def test_an_invocations_metrics_count_what_its_functions_processed_and_raised(engine):
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")
    create(engine, FOREIGN, "counted.Counted", name="g")
    produce(engine, "a", "boom")
    counts: dict[str, float] = {}
    with metering.counting(lambda name, value: counts.update({name: counts.get(name, 0) + value})):  # fmt: skip
        for trigger in engine.triggers.of_topic(IN):
            engine.delivery.deliver_once(trigger)  # one step each: batches on a pool thread

    assert counts[metering.FUNCTION_PROCESSED] == 1
    assert counts[metering.FUNCTION_USER_EXCEPTIONS] == 1
    assert counts[metering.FUNCTION_SYSTEM_EXCEPTIONS] >= 1


def test_a_stopped_function_keeps_its_backlog_until_started(engine):
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")
    engine.functions.control.stop("public", "default", "f")
    produce(engine, "a")
    run(engine)
    stopped = engine.functions.control.status("public", "default", "f")

    engine.functions.control.start("public", "default", "f")
    run(engine)

    assert stopped["numRunning"] == 0 and stopped["instances"][0]["status"]["numReceived"] == 0
    assert payloads(engine, OUT) == ["a!"]
    assert status(engine)["running"] and status(engine)["numReceived"] == 1


def test_an_update_keeps_a_stopped_function_stopped_and_restart_counts(engine):
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")
    engine.functions.control.stop("public", "default", "f")
    create(engine, NATIVE, "myfunc.process")

    assert not status(engine)["running"]
    engine.functions.control.restart("public", "default", "f")
    assert status(engine)["running"] and status(engine)["numRestarts"] == 1


def test_trigger_answers_the_functions_result_on_the_value_each_time_even_with_deduplication(engine):  # fmt: skip
    create(engine, NATIVE, "myfunc.process")
    engine.namespaces.set_deduplication("public", "default", True)

    answers = [engine.functions.control.trigger("public", "default", "f", v) for v in ("hello world", "again")]  # fmt: skip

    assert answers == [f"This function has been triggered with a value of {v}" for v in ("hello world", "again")]  # fmt: skip


def test_trigger_answers_for_a_partitioned_input_whatever_partition_the_value_lands_on(engine):
    engine.topics.create(IN, 3)
    create(engine, NATIVE, "myfunc")

    answers = [engine.functions.control.trigger("public", "default", "f", f"v{i}") for i in range(4)]  # fmt: skip

    assert answers == [f"This function has been triggered with a value of v{i}" for i in range(4)]


def test_trigger_refuses_a_stopped_function_a_foreign_topic_and_reports_an_exception(engine):
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction", maxMessageRetries=1, deadLetterTopic=str(DLQ))  # fmt: skip
    with pytest.raises(InvalidMessage, match="raised on the value: ValueError: no booms here"):
        engine.functions.control.trigger("public", "default", "f", "boom")
    with pytest.raises(InvalidMessage, match="is not an input"):
        engine.functions.control.trigger("public", "default", "f", "x", "other")
    engine.functions.control.stop("public", "default", "f")
    with pytest.raises(ServiceUnitNotReady, match="is stopped"):
        engine.functions.control.trigger("public", "default", "f", "x")


def test_deleting_a_function_forgets_its_stats(engine):
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")
    produce(engine, "a")
    run(engine)
    engine.functions.delete("public", "default", "f")
    create(engine, EXCLAMATION, "exclamation.ExclamationFunction")

    assert status(engine)["numReceived"] == 0


def test_the_cli_maps_pulsar_admins_control_verbs_to_their_routes(tmp_path):
    value = tmp_path / "value.txt"
    value.write_text("from a file")
    base = "/admin/v3/functions/public/default/f"

    def sent(*argv: str) -> tuple:
        return request(parser().parse_args(list(argv)))

    assert sent("status", "--name", "f") == ("GET", f"{base}/status", None)
    assert sent("stats", "--fqfn", "public/default/f") == ("GET", f"{base}/stats", None)
    assert [sent(v, "--name", "f")[:2] for v in ("stop", "start", "restart")] == [
        ("POST", f"{base}/{v}") for v in ("stop", "start", "restart")]  # fmt: skip
    assert sent("trigger", "--name", "f", "--trigger-value", "hi") == ("POST", f"{base}/trigger", {"data": "hi"})  # fmt: skip
    assert sent("trigger", "--name", "f", "--trigger-file", str(value), "--topic", "t")[2] == {
        "data": "from a file", "topic": "t"}  # fmt: skip
    with pytest.raises(ValueError, match="--trigger-file"):
        sent("trigger", "--name", "f", "--trigger-file", str(tmp_path / "none.txt"))


def test_the_routes_answer_pulsars_shapes_and_refuse_a_bad_trigger_body(svc):
    svc.engine.functions.put("public", "default", "f", {"className": "myfunc.process", "code": NATIVE, "inputs": [str(IN)]})  # fmt: skip
    base = f"{svc.url}/admin/v3/functions/public/default"

    def call(method: str, path: str, body: object = None) -> tuple[int, object]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(base + path, data, {"Content-Type": "application/json"}, method=method)  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=10) as answer:  # noqa: S310 - the test's own service
                text = answer.read()
                return answer.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    assert call("POST", "/f/stop") == (204, None)
    code, status = call("GET", "/f/status")
    assert code == 200 and status["numRunning"] == 0 and status["instances"][0]["status"]["running"] is False  # type: ignore[index]  # fmt: skip
    code, error = call("POST", "/f/trigger", {"topic": str(IN)})
    assert code == 400 and error["error"] == "InvalidMessage" and "'data'" in error["message"]  # type: ignore[index]  # fmt: skip
    code, error = call("POST", "/f/trigger", {"data": "x"})
    assert code == 503 and "is stopped" in error["message"]  # type: ignore[index]
    code, error = call("GET", "/nothing/stats")
    assert code == 404 and error["error"] == "NotFound"  # type: ignore[index]


def test_a_forged_runner_report_counts_no_more_than_its_own_batch():
    forged = {"processed": 10**30, "processMs": "x", "userExceptions": [{"exceptionString": "e" * 5000}] * 9,
              "results": {"1:0:-1:-1": {"value": "v", "extra": "no"}, "9:9:-1:-1": {"value": "other"}}}  # fmt: skip

    report = BatchReport.of(forged, ["1:0:-1:-1", "1:1:-1:-1"])

    assert report.processed == 0 and report.process_ms == 0.0  # 2 raised: none processed
    assert len(report.user_exceptions) == 2 and len(report.user_exceptions[0][0]) == 1000
    assert report.results == {"1:0:-1:-1": {"value": "v"}}
    assert BatchReport.of({"processed": 7, "processMs": 1.5}, ["a", "b"]).processed == 2
