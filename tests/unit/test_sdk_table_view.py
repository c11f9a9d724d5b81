"""TableView (``Client.create_table_view``) against the engine on in-memory adapters."""

from __future__ import annotations

import threading
import time

import pytest

import magnetar as pulsar
from magnetar import table_view
from magnetar_local.memory_service import sdk_threads


def publish(client, topic, *pairs):
    producer = client.create_producer(topic)
    for key, value in pairs:
        producer.send(value, partition_key=key)
    producer.close()


def wait_until(predicate, timeout_s=5.0):
    """Poll ``predicate`` (the view's thread applies messages) until true or the deadline."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_a_new_table_view_holds_the_latest_value_of_each_key_published_before(client):
    publish(client, "t", ("a", b"1"), ("b", b"2"), ("a", b"3"), (None, b"keyless"))
    view = client.create_table_view("t")
    try:
        assert (view.get("a"), view.get("b"), view.get("nope")) == (b"3", b"2", None)
        assert view.size() == len(view) == 2
        seen = []
        view.for_each(lambda k, v: seen.append((k, v)))
        assert sorted(seen) == [("a", "3"), ("b", "2")]  # callbacks get text, as pulsar-client's
        assert str(view) == "TableView(topic=t)"
    finally:
        view.close()


def test_a_table_view_follows_updates_and_deletes_and_tells_its_listeners(client):
    publish(client, "t", ("a", b"1"), ("b", b"2"))
    view = client.create_table_view("t")
    heard = []
    view.for_each_and_listen(lambda k, v: heard.append((k, v)))
    publish(client, "t", ("a", b"10"), ("b", None), ("c", b"3"), ("c", b""), (None, b"x"))
    assert wait_until(lambda: len(heard) == 6), heard
    assert sorted(heard[:2]) == [("a", "1"), ("b", "2")]  # for_each: no order promised
    assert heard[2:] == [("a", "10"), ("b", ""), ("c", "3"), ("c", "")]
    assert (view.get("a"), view.get("b"), view.get("c"), view.size()) == (b"10", None, None, 1)
    view.close()


def test_a_table_view_decodes_values_with_its_schema_and_survives_a_failing_listener(client):
    publish(client, "t", ("k", "é".encode()))
    view = client.create_table_view("t", schema=pulsar.StringSchema())
    calls = []

    def flaky(key, value):
        calls.append(value)
        if value == "two":
            raise RuntimeError("listener bug")  # logged; the view goes on

    view.for_each_and_listen(flaky)
    publish(client, "t", ("k", b"two"), ("k", b"three"))
    assert wait_until(lambda: len(calls) == 3) and calls == ["é", "two", "three"]
    assert view.get("k") == "three"
    view.close()


def test_a_table_view_reads_the_compacted_view_from_earliest_on_its_subscription(svc, client):
    view = client.create_table_view("t", subscription_name="my-view")
    view.close()
    [sub] = svc.recorded("subscribe")
    assert "/subscriptions/my-view/consumers" in sub.path
    assert (sub.body["readCompacted"], sub.body["durable"], sub.body["startMessageId"]) == (
        True,
        False,
        "earliest",
    )
    assert str(view) == "TableView(topic=t, subscription=my-view)"


def test_a_table_view_of_a_partitioned_topic_holds_the_keys_of_every_partition(svc, client):
    svc.create_partitioned_topic("persistent/public/default/p", 3)
    pairs = [(f"k{i}", f"v{i}".encode()) for i in range(8)]
    publish(client, "p", *pairs)
    view = client.create_table_view("p")
    assert {k: view.get(k) for k, _ in pairs} == dict(pairs)
    publish(client, "p", ("k0", None))
    assert wait_until(lambda: view.get("k0") is None) and view.size() == 7
    view.close()


def test_closing_a_table_view_stops_its_threads_and_keeps_what_it_read(client):
    publish(client, "t", ("a", b"1"))
    before = {t.name for t in threading.enumerate()}
    view = client.create_table_view("t")
    assert any(t.name.startswith("magnetar-table-view-") for t in threading.enumerate())
    view.close()
    assert not [t for t in sdk_threads() if t.name.startswith("magnetar-table-view-")]
    assert {t.name for t in sdk_threads()} <= before
    assert view.get("a") == b"1"


def test_closing_the_client_ends_its_table_views(svc):
    client = pulsar.Client(svc.url)
    client.create_table_view("t")
    client.close()
    assert wait_until(lambda: not sdk_threads()), sdk_threads()


@pytest.mark.parametrize(
    ("args", "name"),
    [((1,), "topic"), (("t", 5), "subscription_name"), (("t", None, "s"), "schema")],
)
def test_create_table_view_refuses_arguments_of_the_wrong_type(client, args, name):
    with pytest.raises(ValueError, match=f"Argument {name} is expected to be of type"):
        client.create_table_view(*args)


def test_create_table_view_on_a_closed_client_raises_already_closed(svc):
    client = pulsar.Client(svc.url)
    client.close()
    with pytest.raises(pulsar.AlreadyClosed):
        client.create_table_view("t")


def test_catching_up_gives_up_waiting_when_the_last_message_is_not_in_the_view(client, monkeypatch):
    # a compacted view may lack the topic's last message (a tombstone compaction dropped):
    # "more messages exist" then stays true with nothing to read
    publish(client, "t", ("a", b"1"))
    monkeypatch.setattr(table_view, "CATCH_UP_WAIT_MS", 50)
    monkeypatch.setattr(pulsar.Reader, "has_message_available", lambda self: True)
    read_next, reads = pulsar.Reader.read_next, []

    def recorded_read_next(self, timeout_millis=None):
        # the message that exists is awaited as long as it takes (a loaded machine may need
        # more than 50 ms to bring it); the wait for one more is the view's own
        waited = 10_000 if not reads else timeout_millis
        try:
            msg = read_next(self, waited)
        except pulsar.Timeout:
            reads.append((timeout_millis, "Timeout"))
            raise
        reads.append((timeout_millis, msg.data()))
        return msg

    monkeypatch.setattr(pulsar.Reader, "read_next", recorded_read_next)
    view = client.create_table_view("t")
    assert view.get("a") == b"1"
    assert reads == [(50, b"1"), (50, "Timeout")]  # gave up after one wait for more
    view.close()
