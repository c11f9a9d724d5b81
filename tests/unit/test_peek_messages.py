"""Issue 14's reads that consume nothing, on the memory service: peek (the n-th entry of a
subscription's backlog), examinemessage (from either end) and ledger/{l}/entry/{e}, with
Pulsar's headers, and their errors (404 beyond the messages, 405 on a partitioned topic's
name, 412 a position below 1)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

from edge_http import assert_error, call

from magnetar_wire import decode_entry

TOPIC = "persistent/public/default/peek"


def get(url: str) -> tuple[int, bytes, dict[str, str]]:
    """(status, body bytes, headers with lower-case names) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read(), {k.lower(): v for k, v in answer.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, error.read(), {k.lower(): v for k, v in error.headers.items()}


def produce(svc, path: str, *messages: dict) -> list[str]:
    body = json.dumps({"messages": list(messages)}).encode()
    status, answer, _ = call(f"{svc.url}/v1/{path}/messages", body=body)
    assert status == 200, answer
    return answer["messageIds"]


def message(text: str, **fields) -> dict:
    return {"payload": base64.b64encode(text.encode()).decode(), **fields}


def create_subscription(svc, path: str, sub: str) -> None:
    earliest = json.dumps({"ledgerId": -1, "entryId": -1}).encode()
    url = f"{svc.url}/admin/v2/{path}/subscription/{sub}"
    assert call(url, method="PUT", body=earliest)[0] == 204


def backlog(svc, path: str, sub: str) -> int:
    status, stats, _ = call(f"{svc.url}/admin/v2/{path}/stats", method="GET")
    assert status == 200, stats
    return stats["subscriptions"][sub]["msgBacklog"]


def test_peek_returns_the_nth_backlog_message_with_pulsars_headers_and_consumes_nothing(svc):
    produce(svc, TOPIC, message("first", key="k-1", properties={"trace": "t-1"}))
    second = produce(svc, TOPIC, message("second"))
    create_subscription(svc, TOPIC, "s")
    status, body, headers = get(f"{svc.url}/admin/v2/{TOPIC}/subscription/s/position/1")
    assert (status, body) == (200, b"first")
    assert headers["x-pulsar-message-id"] == "1:0"
    assert headers["x-pulsar-property-trace"] == "t-1"
    assert json.loads(headers["x-pulsar-property"]) == {"trace": "t-1"}
    assert headers["x-pulsar-partition-key"] == "k-1"
    assert (
        headers["x-pulsar-publish-time"].endswith("Z") and "T" in headers["x-pulsar-publish-time"]
    )
    status, body, headers = get(f"{svc.url}/admin/v2/{TOPIC}/subscription/s/position/2")
    assert (status, body, headers["x-pulsar-message-id"]) == (200, b"second", second[0][:3])
    assert backlog(svc, TOPIC, "s") == 2


def test_peek_errors_are_pulsars_and_change_nothing(svc):
    produce(svc, TOPIC, message("only"))
    create_subscription(svc, TOPIC, "s")
    url = f"{svc.url}/admin/v2/{TOPIC}"
    assert_error(call(f"{url}/subscription/s/position/2", method="GET"), 404, "NotFound",
                 "Message not found")  # fmt: skip
    assert_error(call(f"{url}/subscription/s/position/0", method="GET"), 412, "PreconditionFailed")
    assert_error(call(f"{url}/subscription/nope/position/1", method="GET"), 404,
                 "SubscriptionNotFound", "Subscription not found")  # fmt: skip
    svc.create_partitioned_topic("persistent/public/default/parts", 2)
    parts = f"{svc.url}/admin/v2/persistent/public/default/parts"
    assert_error(call(f"{parts}/subscription/s/position/1", method="GET"), 405, "NotAllowed",
                 "partition")  # fmt: skip
    assert_error(call(f"{parts}/examinemessage", method="GET"), 405, "NotAllowed")
    assert backlog(svc, TOPIC, "s") == 1


def test_examine_message_counts_from_either_end_and_a_batch_comes_whole(svc):
    produce(svc, TOPIC, message("a"))
    produce(svc, TOPIC, message("b1"), message("b2"))  # one entry, a batch of two
    produce(svc, TOPIC, message("c"))
    url = f"{svc.url}/admin/v2/{TOPIC}/examinemessage"
    assert get(f"{url}?initialPosition=earliest&messagePosition=1")[1] == b"a"
    assert get(url)[1] == b"c"  # latest, position 1: the last
    status, body, headers = get(f"{url}?initialPosition=latest&messagePosition=2")
    assert (status, headers["x-pulsar-num-batch-message"]) == (200, "2")
    assert [m.payload for m in decode_entry(body).messages] == [b"b1", b"b2"]
    assert_error(call(f"{url}?messagePosition=4", method="GET"), 404, "NotFound")
    assert_error(call(f"{url}?initialPosition=middle", method="GET"), 400, "InvalidMessage")


def test_an_entry_is_read_by_ledger_and_entry_id_and_another_ledger_is_404(svc):
    produce(svc, TOPIC, message("zero"))
    produce(svc, TOPIC, message("one"))
    url = f"{svc.url}/admin/v2/{TOPIC}/ledger"
    status, body, headers = get(f"{url}/1/entry/1")
    assert (status, body, headers["x-pulsar-message-id"]) == (200, b"one", "1:1")
    assert_error(call(f"{url}/2/entry/0", method="GET"), 404, "NotFound", "Message not found")
    assert_error(call(f"{url}/1/entry/9", method="GET"), 404, "NotFound")
    assert_error(call(f"{url}/1/entry/x", method="GET"), 400, "InvalidMessage", "entryId")


def test_a_peek_that_asks_for_json_gets_a_batchs_messages_decoded_not_the_entrys_bytes(svc):
    produce(svc, TOPIC, message("b1", key="k"), message("\u00e9t\u00e9"))  # one entry, a batch
    produce(svc, TOPIC, {"payload": base64.b64encode(b"\xff\x00").decode()})
    create_subscription(svc, TOPIC, "people")
    url = f"{svc.url}/admin/v2/{TOPIC}/subscription/people/position"
    accept = {"Accept": "application/json"}

    status, batch, headers = call(f"{url}/1", method="GET", headers=accept)
    assert (status, headers["Content-Type"], headers["X-Pulsar-Message-ID"]) == (
        200, "application/json", "1:0")  # fmt: skip
    assert (batch["messageId"], batch["batched"], batch["encrypted"]) == ("1:0", True, False)
    assert [(m["batchIndex"], m.get("key"), m["text"]) for m in batch["messages"]] == [
        (0, "k", "b1"), (1, None, "\u00e9t\u00e9")]  # fmt: skip
    status, single, _ = call(f"{url}/2", method="GET", headers=accept)
    assert single["batched"] is False and "text" not in single["messages"][0]
    assert base64.b64decode(single["messages"][0]["payload"]) == b"\xff\x00"
    assert get(f"{url}/2")[1] == b"\xff\x00"  # without the header: Pulsar's answer, as before
    assert backlog(svc, TOPIC, "people") == 3
