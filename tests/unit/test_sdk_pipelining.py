"""Producer pipelining: sends queued while a request is in flight go together in the next
(multi-entry) request, in send order; what the service did not store is resent in order."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import requests

import magnetar as pulsar
from magnetar_local.events import HttpResponse
from magnetar_local.recorded import kind_of
from magnetar_wire.frames import ENTRIES_CONTENT_TYPE, decode_frames, encode_frames

COUNT = 20


def entries_per_request(svc) -> list[int]:
    return [len(p.body) if isinstance(p.body, list) else 1 for p in svc.recorded("produce")]


def send_many(producer) -> tuple[list[tuple[int, pulsar.Result, str]], threading.Event]:
    """Send COUNT messages asynchronously: each callback's (message index, result, id) in
    the order the callbacks ran, and an event set once all ran."""
    got: list[tuple[int, pulsar.Result, str]] = []
    done = threading.Event()

    def callback(i: int):
        def complete(result, msg_id):
            got.append((i, result, str(msg_id)))
            if len(got) == COUNT:
                done.set()

        return complete

    for i in range(COUNT):
        producer.send_async(b"m%d" % i, callback(i))
    return got, done


def send_behind_a_held_request(svc, producer) -> list[tuple[int, pulsar.Result, str]]:
    """Send one message and hold its request at the service until COUNT more are queued,
    then let it go; returns the COUNT messages' callbacks (as ``send_many``)."""
    arrived, release, handle = threading.Event(), threading.Event(), svc.handle

    def held(request, invoke):
        if kind_of(request.method, request.raw_path) == "produce" and not release.is_set():
            arrived.set()
            release.wait(10)
        return handle(request, invoke)

    svc.handle = held
    producer.send_async(b"first", lambda r, m: None)
    assert arrived.wait(10)
    got, done = send_many(producer)
    release.set()
    assert done.wait(10)
    return got


def cut_first_multi_request(svc, stored: int, error: str, status: int) -> list[int]:
    """The first multi-entry produce stores only its first ``stored`` entries and answers
    ``error`` for the next one (the rest not attempted), as the service does mid-way (the
    service records the request cut to those entries). Returns the list that gets the
    entry count of the request as the producer sent it."""
    handle, cut = svc.handle, []

    def partial(request, invoke):
        content_type = dict((k.lower(), v) for k, v in request.headers).get("content-type")
        if content_type != ENTRIES_CONTENT_TYPE or cut:
            return handle(request, invoke)
        frames = decode_frames(request.body)
        cut.append(len(frames))
        answer = handle(replace(request, body=encode_frames(frames[:stored])), invoke)
        results = json.loads(answer.body)["results"]
        failed = {"error": error, "message": "injected", "status": status, "attempted": True}
        skipped = {"error": "ServiceUnitNotReady", "message": "not attempted", "status": 503,
                   "attempted": False}  # fmt: skip
        results += [failed] + [skipped] * (len(frames) - stored - 1)
        body = json.dumps({"results": results, "committed": stored}).encode()
        return HttpResponse(200, [("Content-Type", "application/json")], body)

    svc.handle = partial
    return cut


def test_sends_queued_behind_a_request_in_flight_go_in_one_request_in_order(svc, client):
    producer = client.create_producer("t", batching_enabled=False)
    got = send_behind_a_held_request(svc, producer)
    assert entries_per_request(svc) == [1, COUNT]
    assert got == [(i, pulsar.Result.Ok, f"1:{i + 1}:-1:-1") for i in range(COUNT)]
    assert svc.recorded("produce")[1].headers["Content-Type"] == ENTRIES_CONTENT_TYPE


def test_entries_the_service_did_not_store_mid_way_are_resent_in_order(svc, client):
    producer = client.create_producer("t", batching_enabled=False)
    sent = cut_first_multi_request(svc, stored=3, error="TooManyRequests", status=429)
    got = send_behind_a_held_request(svc, producer)
    assert got == [(i, pulsar.Result.Ok, f"1:{i + 1}:-1:-1") for i in range(COUNT)]
    assert (sent, entries_per_request(svc)) == ([COUNT], [1, 3, COUNT - 3])
    resent = svc.recorded("produce")[2].body
    assert resent[0].messages[0].payload == b"m3"


def test_an_entry_refused_mid_way_fails_alone_and_the_rest_are_sent_on(svc, client):
    producer = client.create_producer("t", batching_enabled=False)
    sent = cut_first_multi_request(svc, stored=3, error="InvalidMessage", status=400)
    got = send_behind_a_held_request(svc, producer)
    assert [i for i, _, _ in got] == list(range(COUNT))
    assert got[3][1] is pulsar.Result.InvalidMessage
    stored = [m for i, r, m in got if r is pulsar.Result.Ok]
    assert stored == [f"1:{e}:-1:-1" for e in range(1, COUNT)]  # no gap in the log
    assert (sent, entries_per_request(svc)) == ([COUNT], [1, 3, COUNT - 4])


def test_a_malformed_multi_entry_body_is_a_400_invalid_message_and_stores_nothing(svc, client):
    url = f"{svc.url}/v1/persistent/public/default/t/messages"
    answer = requests.post(url, data=b"\x00\x00\x00\x09abc",
                           headers={"Content-Type": ENTRIES_CONTENT_TYPE}, timeout=10)  # fmt: skip
    assert answer.status_code == 400
    assert answer.json()["error"] == "InvalidMessage"
    assert "frame 0 at byte 0 declares 9 bytes" in answer.json()["message"]
    assert str(client.create_producer("t").send(b"x")) == "1:0:-1:-1"


def payloads(request) -> list[bytes]:
    """The payloads one recorded produce request carried, in request order."""
    entries = request.body if isinstance(request.body, list) else [request.body]
    return [m.payload for e in entries for m in e.messages]


def test_sends_still_refused_at_their_send_timeout_fail_with_timeout_in_send_order(svc, client):
    producer = client.create_producer("t", batching_enabled=False, send_timeout_millis=300)
    for _ in range(500):
        svc.fail_next("produce", 429, "TooManyRequests", "slow down")
    arrived, release, handle = threading.Event(), threading.Event(), svc.handle

    def held(request, invoke):  # the first request waits until every send is queued
        if kind_of(request.method, request.raw_path) == "produce" and not release.is_set():
            arrived.set()
            release.wait(10)
        return handle(request, invoke)

    svc.handle = held
    got, done = send_many(producer)
    assert arrived.wait(10)
    release.set()
    assert done.wait(10)
    assert got == [(i, pulsar.Result.Timeout, "None") for i in range(COUNT)]
    sent = [payloads(p) for p in svc.recorded("produce")]
    assert sent[0] == [b"m%d" % i for i in range(len(sent[0]))]  # what was queued by then
    assert sent[1] == [b"m%d" % i for i in range(COUNT)]
    # every resend carries the sends not yet timed out: the last ones, together, in order
    assert all(s == [b"m%d" % i for i in range(COUNT - len(s), COUNT)] for s in sent[1:])
