"""Issue 14's subscription verbs on the memory service, through the admin handler: skip,
skip_all, expireMessages (one subscription and all), resetcursor (a time, a message id) and
PUT a subscription, with Pulsar's errors (404 "Subscription not found", 405 skip on a
partitioned topic, 400/412 bad numbers, 409 existing subscription), each changing nothing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from edge_http import admin, assert_error, call, receive, subscribe

from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.domain.runtime import Runtime
from magnetar_local.memory_service import MemoryService

TOPIC = "persistent/public/default/ops"


class Clock:
    """A settable epoch-ms clock for publish times and expiry."""

    def __init__(self) -> None:
        self.ms = 1_700_000_000_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def svc(clock):
    with MemoryService(runtime=replace(Runtime(), now_ms=clock)) as service:
        yield service


def produce(svc, path: str, count: int) -> list[str]:
    """``count`` single-message entries; their ids."""
    ids = []
    for i in range(count):
        body = json.dumps({"messages": [{"payload": f"bTA{i}"}]}).encode()
        status, answer, _ = call(f"{svc.url}/v1/{path}/messages", body=body)
        assert status == 200, answer
        ids.extend(answer["messageIds"])
    return ids


def backlog(svc, path: str, sub: str) -> int:
    status, answer, _ = call(f"{svc.url}/admin/v2/{path}/stats", method="GET")
    assert status == 200, answer
    return answer["subscriptions"][sub]["msgBacklog"]


def test_skip_acknowledges_the_next_n_messages_and_skip_beyond_the_backlog_empties_it(svc):
    consumer = subscribe(svc, TOPIC, "s")
    ids = produce(svc, TOPIC, 5)
    assert admin(svc, TOPIC, "subscription/s/skip/2")[0] == 204
    assert backlog(svc, TOPIC, "s") == 3
    assert receive(svc, TOPIC, "s", consumer) == ids[2:]
    assert admin(svc, TOPIC, "subscription/s/skip/10")[0] == 204
    assert backlog(svc, TOPIC, "s") == 0


def test_skip_on_a_partitioned_topic_is_405_and_bad_numbers_are_400_or_412_changing_nothing(svc):
    svc.create_partitioned_topic("persistent/public/default/parts", 2)
    subscribe(svc, "persistent/public/default/parts-partition-0", "s")
    assert_error(admin(svc, "persistent/public/default/parts", "subscription/s/skip/1"),
                 405, "NotAllowed", "Skip messages on a partitioned topic is not allowed")  # fmt: skip
    subscribe(svc, TOPIC, "s")
    produce(svc, TOPIC, 2)
    assert_error(admin(svc, TOPIC, "subscription/s/skip/two"), 400, "InvalidMessage", "numMessages")
    assert_error(
        admin(svc, TOPIC, "subscription/s/skip/0"), 412, "PreconditionFailed", "numMessages"
    )
    assert_error(admin(svc, TOPIC, "subscription/s/expireMessages/-1"), 412, "PreconditionFailed")
    assert_error(admin(svc, TOPIC, "subscription/s/resetcursor", body={"entryId": 0}), 400,
                 "InvalidMessage", "ledgerId")  # fmt: skip
    assert backlog(svc, TOPIC, "s") == 2


@pytest.mark.parametrize(
    ("verb", "method", "body"),
    [
        ("subscription/nope/skip/1", "POST", None),
        ("subscription/nope/skip_all", "POST", None),
        ("subscription/nope/expireMessages/0", "POST", None),
        ("subscription/nope/resetcursor/0", "POST", None),
        ("subscription/nope/resetcursor", "POST", {"ledgerId": 1, "entryId": 0}),
    ],
)
def test_an_unknown_subscription_is_404_subscription_not_found(svc, verb, method, body):
    subscribe(svc, TOPIC, "s")
    assert_error(admin(svc, TOPIC, verb, method, body), 404, "SubscriptionNotFound",
                 "Subscription not found", "nope")  # fmt: skip


def test_skip_all_clears_the_backlog_on_every_partition(svc):
    base = "persistent/public/default/parts"
    svc.create_partitioned_topic(base, 2)
    for i in range(2):
        subscribe(svc, f"{base}-partition-{i}", "s")
        produce(svc, f"{base}-partition-{i}", 3)
    assert admin(svc, base, "subscription/s/skip_all")[0] == 204
    status, total, _ = call(f"{svc.url}/admin/v2/{base}/partitioned-stats", method="GET")
    assert (status, total["subscriptions"]["s"]["msgBacklog"]) == (200, 0)


def test_expire_messages_acknowledges_only_messages_older_than_the_given_seconds(svc, clock):
    subscribe(svc, TOPIC, "a")
    subscribe(svc, TOPIC, "b")
    produce(svc, TOPIC, 2)
    clock.ms += 60_000
    produce(svc, TOPIC, 3)
    clock.ms += 10_000
    assert admin(svc, TOPIC, "subscription/a/expireMessages/30")[0] == 204
    assert (backlog(svc, TOPIC, "a"), backlog(svc, TOPIC, "b")) == (3, 5)
    assert admin(svc, TOPIC, "all_subscription/expireMessages/5")[0] == 204
    assert (backlog(svc, TOPIC, "a"), backlog(svc, TOPIC, "b")) == (0, 0)


def test_reset_cursor_to_a_time_or_a_message_id_redelivers_from_there(svc, clock):
    consumer = subscribe(svc, TOPIC, "s")
    early = produce(svc, TOPIC, 2)
    clock.ms += 1_000
    late = produce(svc, TOPIC, 2)
    assert receive(svc, TOPIC, "s", consumer) == early + late
    assert admin(svc, TOPIC, f"subscription/s/resetcursor/{clock.ms}")[0] == 204
    assert receive(svc, TOPIC, "s", consumer) == late
    ledger, entry = (int(part) for part in early[1].split(":")[:2])
    assert admin(svc, TOPIC, "subscription/s/resetcursor", body={"ledgerId": ledger, "entryId": entry})[0] == 204  # fmt: skip
    assert receive(svc, TOPIC, "s", consumer) == early[1:] + late
    excluded = {"ledgerId": ledger, "entryId": entry, "isExcluded": True}
    assert admin(svc, TOPIC, "subscription/s/resetcursor", body=excluded)[0] == 204
    assert receive(svc, TOPIC, "s", consumer) == late


def test_put_subscription_creates_it_at_latest_earliest_or_a_message_id_and_twice_is_409(svc):
    ids = produce(svc, TOPIC, 3)
    assert admin(svc, TOPIC, "subscription/latest", "PUT")[0] == 204
    assert admin(svc, TOPIC, "subscription/earliest", "PUT", {"ledgerId": -1, "entryId": -1})[0] == 204  # fmt: skip
    ledger, entry = (int(part) for part in ids[1].split(":")[:2])
    assert admin(svc, TOPIC, "subscription/at", "PUT", {"ledgerId": ledger, "entryId": entry})[0] == 204  # fmt: skip
    assert [backlog(svc, TOPIC, s) for s in ("latest", "earliest", "at")] == [0, 3, 2]
    assert_error(admin(svc, TOPIC, "subscription/at", "PUT"), 409, "Conflict", "already exists")
    assert_error(admin(svc, TOPIC, "subscription/bad", "PUT", {"ledgerId": "x", "entryId": 0}),
                 400, "InvalidMessage", "ledgerId")  # fmt: skip
    status, names, _ = call(f"{svc.url}/admin/v2/{TOPIC}/subscriptions", method="GET")
    assert (status, sorted(names)) == (200, ["at", "earliest", "latest"])


def test_a_cursor_move_that_loses_its_conditional_write_retries_on_a_fresh_read(svc, monkeypatch):
    consumer = subscribe(svc, TOPIC, "s")
    ids = produce(svc, TOPIC, 3)
    cursors = svc.stores.cursors
    original = cursors.put
    raced = []

    def put_losing_once(key, state):
        if not raced:  # another writer wins first: this consumer acks the first message
            raced.append(True)
            receive(svc, TOPIC, "s", consumer)
            url = f"{svc.url}/v1/{TOPIC}/subscriptions/s/consumers/{consumer}/ack"
            assert call(url, body=json.dumps({"messageIds": ids[:1]}).encode())[0] == 200
            raise ConditionFailed()
        return original(key, state)

    monkeypatch.setattr(cursors, "put", put_losing_once)
    assert admin(svc, TOPIC, "subscription/s/skip/1")[0] == 204
    monkeypatch.setattr(cursors, "put", original)
    assert raced and backlog(svc, TOPIC, "s") == 1  # the ack kept, and one more skipped


def test_namespace_clear_backlog_and_unsubscribe_reach_every_topic_that_has_the_subscription(svc):
    ns = "/admin/v2/namespaces/public/default"
    for topic in ("persistent/public/default/n1", "persistent/public/default/n2"):
        produce(svc, topic, 2)
        for sub in ("a", "b"):
            assert admin(svc, topic, f"subscription/{sub}", "PUT", {"ledgerId": -1, "entryId": -1})[0] == 204  # fmt: skip
    assert call(f"{svc.url}{ns}/clearBacklog/a", method="POST")[0] == 204
    assert [backlog(svc, "persistent/public/default/n2", s) for s in "ab"] == [0, 2]
    assert call(f"{svc.url}{ns}/clearBacklog", method="POST")[0] == 204
    assert backlog(svc, "persistent/public/default/n1", "b") == 0
    consumer = subscribe(svc, "persistent/public/default/n2", "a")
    assert_error(call(f"{svc.url}{ns}/unsubscribe/a", method="POST"), 409, "ConsumerBusy",
                 "nothing was deleted")  # fmt: skip
    kept = call(f"{svc.url}/admin/v2/persistent/public/default/n1/subscriptions", method="GET")
    assert kept[1] == ["a", "b"]
    url = f"{svc.url}/v1/persistent/public/default/n2/subscriptions/a/consumers/{consumer}"
    assert call(url, method="DELETE")[0] == 200
    assert call(f"{svc.url}{ns}/unsubscribe/a", method="POST")[0] == 204
    for topic in ("n1", "n2"):
        names = call(f"{svc.url}/admin/v2/persistent/public/default/{topic}/subscriptions", method="GET")[1]  # fmt: skip
        assert names == ["b"]
    missing = call(f"{svc.url}/admin/v2/namespaces/public/nope/clearBacklog", method="POST")
    assert_error(missing, 404, "NotFound", "does not exist")


def test_expiry_and_reset_by_time_pass_over_entries_the_log_no_longer_holds(svc, clock):
    subscribe(svc, TOPIC, "s")
    produce(svc, TOPIC, 6)
    key = svc.key_of(TOPIC)
    with svc.tables.lock:  # as the expiry job deletes them: ids 0..3 are gone
        for entry_id in range(4):
            svc.tables.log.delete(key, entry_id)
    clock.ms += 60_000
    fresh = produce(svc, TOPIC, 1)
    assert admin(svc, TOPIC, "subscription/s/expireMessages/30")[0] == 204
    assert backlog(svc, TOPIC, "s") == 1
    assert admin(svc, TOPIC, f"subscription/s/resetcursor/{clock.ms}")[0] == 204
    assert backlog(svc, TOPIC, "s") == 1
    consumer = subscribe(svc, TOPIC, "s")
    assert receive(svc, TOPIC, "s", consumer) == fresh
