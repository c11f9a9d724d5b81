"""Issue 14's topic verbs on the memory service, through the admin handler: terminate (one
topic, one partition, every partition), unload, truncate and growing a partitioned topic,
with Pulsar's errors (405 terminate on a partitioned topic's name and on a non-persistent
topic, 409 TopicTerminated on a later produce and a partition count not above the current
one, 404 unknown topics), each changing nothing."""

from __future__ import annotations

import json

import pytest
from edge_http import admin, assert_error, call, receive, subscribe

from magnetar_core.domain.errors import TopicTerminated
from magnetar_local.memory_service import MemoryService, topic_name

TOPIC = "persistent/public/default/ops"


@pytest.fixture
def svc():
    with MemoryService() as service:
        yield service


def produce(svc, path: str, count: int = 1):
    """``count`` single-message entries, one request each; the last answer."""
    answer = None
    for i in range(count):
        body = json.dumps({"messages": [{"payload": f"bTA{i}"}]}).encode()
        answer = call(f"{svc.url}/v1/{path}/messages", body=body)
    return answer


def produced(svc, path: str, count: int = 1) -> list[str]:
    ids = []
    for _ in range(count):
        status, answer, _ = produce(svc, path)
        assert status == 200, answer
        ids.extend(answer["messageIds"])
    return ids


def stored_objects(svc) -> int:
    """How many entry objects the memory bucket holds."""
    return len(svc.stores.entries._objects)


def head(svc, path: str) -> int:
    return svc.stores.log.head(svc.key_of(path))


def backlog(svc, path: str, sub: str) -> int:
    status, stats, _ = call(f"{svc.url}/admin/v2/{path}/stats", method="GET")
    assert status == 200, stats
    return stats["subscriptions"][sub]["msgBacklog"]


# -- terminate ------------------------------------------------------------------------------


def test_terminate_answers_the_last_message_id_and_a_later_produce_fails_storing_nothing(svc):
    ids = produced(svc, TOPIC, 3)
    status, answer, _ = admin(svc, TOPIC, "terminate")
    assert status == 200, answer
    assert answer["messageId"] == ids[-1]
    assert (answer["ledgerId"], answer["entryId"], answer["partitionIndex"]) == (1, 2, -1)
    objects, last = stored_objects(svc), head(svc, TOPIC)
    for _ in range(2):  # the fence teaches the producer's container, then its cache does
        assert_error(produce(svc, TOPIC), 409, "TopicTerminated", "terminated", "nothing")
    assert (stored_objects(svc), head(svc, TOPIC)) == (objects, last)


def test_a_producer_whose_container_cached_the_topic_before_termination_is_refused_at_commit(svc):
    produced(svc, TOPIC)
    other = svc.new_engine()  # another container, its metadata cached before the terminate
    assert other.topics.cached_meta(topic_name(TOPIC)) is not None
    assert admin(svc, TOPIC, "terminate")[0] == 200
    objects, last = stored_objects(svc), head(svc, TOPIC)
    with pytest.raises(TopicTerminated):
        other.producer.publish(topic_name(TOPIC), _entry())
    assert (stored_objects(svc), head(svc, TOPIC)) == (objects, last)


def test_a_terminated_topic_deleted_and_created_again_takes_messages_again(svc):
    produced(svc, TOPIC)
    assert admin(svc, TOPIC, "terminate")[0] == 200
    for _ in range(2):  # the producer's container caches the topic as terminated
        assert_error(produce(svc, TOPIC), 409, "TopicTerminated")
    assert call(f"{svc.url}/admin/v2/{TOPIC}", method="DELETE")[0] == 204
    assert produced(svc, TOPIC) == ["2:0:-1:-1"]  # auto-created: a new ledger, open


def test_consumers_still_get_what_was_published_before_the_termination(svc):
    ids = produced(svc, TOPIC, 2)
    consumer = subscribe(svc, TOPIC, "s")
    assert admin(svc, TOPIC, "terminate")[0] == 200
    assert receive(svc, TOPIC, "s", consumer) == ids
    assert receive(svc, TOPIC, "s", consumer) == []


def test_terminate_twice_answers_the_same_id_and_an_empty_topic_answers_minus_ones(svc):
    produced(svc, TOPIC, 2)
    first = admin(svc, TOPIC, "terminate")[1]
    assert admin(svc, TOPIC, "terminate")[1] == first
    empty = "persistent/public/default/empty"
    assert call(f"{svc.url}/admin/v2/{empty}", method="PUT")[0] == 204
    status, answer, _ = admin(svc, empty, "terminate")
    assert (status, answer["ledgerId"], answer["entryId"]) == (200, -1, -1)


def test_terminate_refuses_a_partitioned_topics_name_and_terminate_partitions_closes_each(svc):
    base = "persistent/public/default/parts"
    svc.create_partitioned_topic(base, 2)
    produced(svc, base + "-partition-1")
    assert_error(admin(svc, base, "terminate"), 405, "NotAllowed", "terminate/partitions")
    assert produce(svc, base + "-partition-0")[0] == 200  # the refusal changed nothing
    status, answer, _ = admin(svc, base, "terminate/partitions")
    assert status == 200, answer
    assert sorted(answer) == ["0", "1"]
    assert (answer["0"]["entryId"], answer["1"]["entryId"]) == (0, 0)
    for i in range(2):
        assert_error(produce(svc, f"{base}-partition-{i}"), 409, "TopicTerminated")


def test_terminating_one_partition_leaves_the_others_open(svc):
    base = "persistent/public/default/parts"
    svc.create_partitioned_topic(base, 2)
    assert admin(svc, base + "-partition-0", "terminate")[0] == 200
    assert_error(produce(svc, base + "-partition-0"), 409, "TopicTerminated")
    assert produce(svc, base + "-partition-1")[0] == 200


def test_terminate_errors_for_unknown_non_persistent_and_non_partitioned_topics(svc):
    assert_error(admin(svc, "persistent/public/default/nope", "terminate"), 404, "TopicNotFound")
    assert_error(admin(svc, "non-persistent/public/default/np", "terminate"), 405, "NotAllowed")
    produced(svc, TOPIC)
    assert_error(admin(svc, TOPIC, "terminate/partitions"), 405, "NotAllowed", "terminate")
    assert produce(svc, TOPIC)[0] == 200


# -- unload ---------------------------------------------------------------------------------


def test_unload_drops_the_serving_containers_cached_partition_count(svc):
    base = "persistent/public/default/grown"
    svc.create_partitioned_topic(base, 2)
    container = svc.engine  # serves the produces and the unload below

    def publish(count: int) -> None:
        for _ in range(count):  # keyless: round robin over the partitions it knows
            container.producer.publish(topic_name(base), _entry())

    publish(2)
    svc.new_engine().admin.topic_ops.update_partitions(topic_name(base), 3)  # elsewhere
    publish(4)
    assert head(svc, base + "-partition-2") == -1  # its cached metadata still says 2
    container.admin.topic_ops.unload(topic_name(base))
    publish(3)
    assert head(svc, base + "-partition-2") >= 0
    assert admin(svc, base, "unload", method="PUT")[0] == 204  # the route: the admin's container


def test_unload_of_an_unknown_topic_is_not_found(svc):
    answer = admin(svc, "persistent/public/default/nope", "unload", method="PUT")
    assert_error(answer, 404, "TopicNotFound")


# -- truncate -------------------------------------------------------------------------------


def test_truncate_moves_every_subscription_of_every_partition_to_the_end(svc):
    base = "persistent/public/default/parts"
    svc.create_partitioned_topic(base, 2)
    for sub in ("a", "b"):
        subscribe(svc, base + "-partition-0", sub)
        subscribe(svc, base + "-partition-1", sub)
    for i in range(2):
        produced(svc, f"{base}-partition-{i}", 2)
    assert backlog(svc, base + "-partition-1", "b") == 2
    assert admin(svc, base, "truncate", method="DELETE")[0] == 204
    for i in range(2):
        for sub in ("a", "b"):
            assert backlog(svc, f"{base}-partition-{i}", sub) == 0


def test_truncate_errors_for_unknown_and_non_persistent_topics(svc):
    answer = admin(svc, "persistent/public/default/nope", "truncate", method="DELETE")
    assert_error(answer, 404, "TopicNotFound")
    answer = admin(svc, "non-persistent/public/default/np", "truncate", method="DELETE")
    assert_error(answer, 405, "NotAllowed")


# -- update partitions ----------------------------------------------------------------------


def test_growing_a_partitioned_topic_creates_its_subscriptions_on_the_new_partitions(svc):
    base = "persistent/public/default/grow"
    svc.create_partitioned_topic(base, 2)
    subscribe(svc, base + "-partition-0", "billing")
    assert admin(svc, base, "partitions", body=4)[0] == 204
    assert call(f"{svc.url}/admin/v2/{base}/partitions", method="GET")[1] == {"partitions": 4}
    ids = produced(svc, base + "-partition-3")
    consumer = subscribe(svc, base + "-partition-3", "billing")
    assert receive(svc, base + "-partition-3", "billing", consumer) == ids  # from the start


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [(2, 409, "Conflict"), (1, 409, "Conflict"), (0, 400, "InvalidMessage"),
     (2000, 400, "InvalidMessage"), ("3", 400, "InvalidMessage"), (None, 400, "InvalidMessage")],
)  # fmt: skip
def test_updating_partitions_refuses_a_count_that_does_not_grow_the_topic(svc, body, status, code):
    base = "persistent/public/default/grow"
    svc.create_partitioned_topic(base, 2)
    version = svc.stores.topics.get(topic_name(base)).version
    assert_error(admin(svc, base, "partitions", body=body), status, code)
    assert svc.stores.topics.get(topic_name(base)).version == version


def test_updating_partitions_refuses_non_partitioned_topics_partitions_and_unknown_topics(svc):
    produced(svc, TOPIC)
    assert_error(admin(svc, TOPIC, "partitions", body=3), 409, "Conflict", "not partitioned")
    base = "persistent/public/default/grow"
    svc.create_partitioned_topic(base, 2)
    answer = admin(svc, base + "-partition-0", "partitions", body=3)
    assert_error(answer, 412, "PreconditionFailed", "partition")
    answer = admin(svc, "persistent/public/default/nope", "partitions", body=3)
    assert_error(answer, 404, "TopicNotFound")


def _entry() -> bytes:
    from magnetar_wire import EntryMessage, encode_entry

    message = EntryMessage(payload=b"late", sequence_id=0, publish_time_ms=1)
    return encode_entry([message], producer_name="stale")
