"""Pulsar Functions on the memory service: a function's triggers, its runtime on delivered
batches (results in order, effectively once on retries, counters and state, user config)
and its deletion."""

from __future__ import annotations

import base64
import itertools
import json
import textwrap

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import Conflict, InvalidMessage, NotFound
from magnetar_core.domain.triggers.records import TargetFailed
from magnetar_core.engine import Engine
from magnetar_core.services.functions.runtime import INPUT_MESSAGE_ID, INPUT_TOPIC
from magnetar_core.services.triggers.delivery import records_of
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

_READS = itertools.count()
IN = TopicName.parse("persistent://public/default/in")
OUT = TopicName.parse("persistent://public/default/out")
AUDIT = TopicName.parse("persistent://public/default/audit")
CODE = textwrap.dedent('''
    import magnetar as pulsar

    class Exclaim(pulsar.Function):
        """Counts its calls, fails the first try of inputs the user config calls flaky
        and every try of broken ones (after auditing them), and exclaims."""

        def process(self, input, context):
            tries = "tries:" + context.get_message_id()
            context.incr_counter(tries, 1)
            context.incr_counter("calls", 1)
            context.put_state("last", input)
            context.publish(context.get_user_config_value("audit"), input, properties={"a": "1"})
            if input in context.get_user_config_value("flaky") and context.get_counter(tries) == 1:
                raise RuntimeError("fails the first time")
            if input in (context.get_user_config_value("broken") or []):
                raise RuntimeError("always fails")
            if input == "none":
                return None
            return f"{input}! key={context.get_message_key()} fn={context.get_function_id()}"
''')


def body(**extra: object) -> dict:
    config = {"audit": str(AUDIT), "flaky": []}
    config.update(extra.pop("userConfig", {}))
    return {"className": "exclaim.Exclaim", "code": CODE, "inputs": [str(IN)],
            "output": str(OUT), "userConfig": config, **extra}  # fmt: skip


@pytest.fixture
def engine() -> Engine:
    engine = Engine.assemble(memory_settings(), STORES.setdefault("stores", memory_stores()))
    engine.tenants.initialize_cluster()
    return engine


@pytest.fixture(autouse=True)
def _fresh_stores():
    """Each test's engine on stores of its own (read back through ``state()``)."""
    STORES.clear()
    yield
    STORES.clear()


STORES: dict = {}


def state():
    return STORES["stores"].function_state


def produce(engine: Engine, *payloads: str, key: str | None = "k") -> list[str]:
    ids = []
    for i, text in enumerate(payloads):
        message = EntryMessage(payload=text.encode(), sequence_id=i, publish_time_ms=1, key=key)
        entry = encode_entry([message], producer_name="p")
        ids += engine.producer.publish(IN, entry).message_ids
    return ids


def run(engine: Engine) -> None:
    """Delivery steps of the function's trigger until one moves nothing."""
    trigger = engine.triggers.of_topic(IN)[0]
    for _ in range(50):
        outcome = engine.delivery.deliver_once(trigger)
        if not (outcome.acknowledged or outcome.retried):
            return
    raise AssertionError("the trigger never settled")


def read(engine: Engine, topic: TopicName) -> list:
    """Every message of ``topic`` (all partitions) as trigger records."""
    meta, subs = engine.topics.get(topic), engine.subscriptions
    name = f"check-{next(_READS)}"
    out = []
    for ref in engine.topics.partitions_of(meta):
        handle = subs.subscribe(ref.topic, name, "c", "Shared", True)
        out += records_of(subs.receive(ref.topic, name, handle.consumer_id, 1000, 0))
    return out


def payloads(engine: Engine, topic: TopicName) -> list[str]:
    return [r.payload.decode() for r in read(engine, topic)]


def test_a_function_gets_a_trigger_on_its_input_and_publishes_each_result_in_order(engine):
    config, created = engine.functions.put("public", "default", "exclaim", body())
    ids = produce(engine, "a", "b", "none")
    run(engine)

    trigger = engine.triggers.get(IN, "public.default.exclaim")
    assert created and config.version == 1 and trigger.spec.maximum_concurrency == 1
    assert trigger.spec.target.to_body() == {"type": "function", "function": "public/default/exclaim"}  # fmt: skip
    assert trigger.spec.output_topic == str(OUT)
    results = read(engine, OUT)
    assert [r.payload.decode() for r in results] == [
        "a! key=k fn=public/default/exclaim", "b! key=k fn=public/default/exclaim"]  # fmt: skip
    assert results[0].key == "k"
    assert results[0].properties == {INPUT_TOPIC: str(IN), INPUT_MESSAGE_ID: ids[0]}
    assert payloads(engine, AUDIT) == ["a", "b", "none"]
    assert read(engine, AUDIT)[0].properties["a"] == "1"
    assert engine.functions.names("public", "default") == ["exclaim"]


def test_a_failed_record_fails_the_rest_of_its_batch_and_its_retry_publishes_once(engine):
    engine.functions.put("public", "default", "exclaim", body(userConfig={"flaky": ["b"]}, batchSize=10))  # fmt: skip
    produce(engine, "a", "b", "c")
    run(engine)

    assert payloads(engine, OUT) == [f"{x}! key=k fn=public/default/exclaim" for x in "abc"]
    assert payloads(engine, AUDIT) == ["a", "b", "c"]  # b audited twice, published once
    counter = state().get_counter
    assert counter("public/default/exclaim", "calls") == 4  # a, b (fails: c not run), b, c


def test_a_batch_run_twice_publishes_each_result_once_on_a_partitioned_output(engine):
    engine.admin.create_topic(OUT, 3)
    engine.functions.put("public", "default", "exclaim", body())
    ids = produce(engine, "a", "b", "c", key=None)
    records = [{"messageId": i, "topic": str(IN), "key": None, "payload": base64.b64encode(p).decode(),
                "properties": {}, "eventTime": 0} for i, p in zip(ids, [b"a", b"b", b"c"], strict=True)]  # fmt: skip

    for _ in range(2):  # the answer of the first run was lost: the batch comes again
        answer = engine.function_dispatcher.handle("public/default/exclaim", {"records": records})
        assert answer == {"batchItemFailures": []}

    assert sorted(payloads(engine, OUT)) == [f"{x}! key=None fn=public/default/exclaim" for x in "abc"]  # fmt: skip


def test_a_missing_or_broken_function_fails_the_whole_batch(engine):
    with pytest.raises(TargetFailed, match="no function"):
        engine.function_dispatcher.handle("public/default/nope", {"records": []})
    engine.functions.put(
        "public", "default", "broken", {**body(), "code": "raise SystemError('x')"}
    )
    with pytest.raises(TargetFailed, match="raised"):
        engine.function_dispatcher.handle("public/default/broken", {"records": []})
    engine.functions.put("public", "default", "classless", {**body(), "className": "m.Missing"})
    with pytest.raises(TargetFailed, match="no class Missing"):
        engine.function_dispatcher.handle("public/default/classless", {"records": []})


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"className": "no-module.Class"}, "className"),
        ({"inputs": []}, "inputs"),
        ({"output": "non-persistent://public/default/x"}, "output"),
        ({"code": ""}, "code"),
        ({"code": "def f(:\n"}, "code"),
        ({"userConfig": [1]}, "userConfig"),
        ({"deadLetterTopic": "dlq"}, "deadLetterTopic"),
        ({"color": "red"}, "color"),
    ],
)
def test_a_bad_function_body_names_the_field_and_stores_nothing(engine, change, field):
    with pytest.raises(InvalidMessage, match=f"'{field}'"):
        engine.functions.put("public", "default", "exclaim", {**body(), **change})
    assert engine.functions.names("public", "default") == []
    with pytest.raises(Exception, match="does not exist|not found"):
        engine.triggers.names(IN)


def test_deleting_a_function_deletes_its_trigger_subscription_counters_and_state(engine):
    engine.functions.put("public", "default", "exclaim", body())
    produce(engine, "a")
    run(engine)
    fqfn, stored = "public/default/exclaim", state()
    assert stored.get_state(fqfn, "last") == b"a"

    engine.functions.delete("public", "default", "exclaim")

    assert engine.triggers.names(IN) == [] and engine.functions.names("public", "default") == []
    assert "public.default.exclaim" not in engine.admin.subscriptions(IN)
    assert stored.get_state(fqfn, "last") is None and stored.get_counter(fqfn, "calls") == 0
    with pytest.raises(NotFound):
        engine.functions.delete("public", "default", "exclaim")


def test_a_record_failing_past_max_message_retries_goes_to_the_dead_letter_topic(engine):
    broken = {"userConfig": {"broken": ["b"]}}
    engine.functions.put("public", "default", "exclaim", body(maxMessageRetries=1, deadLetterTopic="dlq", **broken))  # fmt: skip
    produce(engine, "a", "b", "c")
    run(engine)

    assert payloads(engine, OUT) == [f"{x}! key=k fn=public/default/exclaim" for x in "ac"]
    assert payloads(engine, TopicName.parse("dlq")) == ["b"]
    assert json.loads(json.dumps(engine.functions.get("public", "default", "exclaim").to_body()))["deadLetterTopic"].endswith("/dlq")  # fmt: skip


def test_a_new_function_whose_trigger_is_refused_is_not_kept(engine):
    engine.admin.create_topic(IN, None)
    engine.subscriptions.subscribe(IN, "public.default.exclaim", "someone", "Shared", True)
    with pytest.raises(Conflict, match="already has a subscription"):
        engine.functions.put("public", "default", "exclaim", body())
    assert engine.functions.names("public", "default") == []
    assert engine.triggers.names(IN) == []
