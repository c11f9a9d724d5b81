"""Bad parameters found by fuzzing and probes of the HTTP edge: each is a 400 (or the status
Pulsar gives) in our JSON error shape, and changes nothing."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from edge_http import TOPIC, assert_error, call, receive, subscribe

PATH = TOPIC.lstrip("/")


def _consumer_with_everything_acknowledged(svc) -> str:
    """A Shared consumer of ``s`` on the topic that received and acknowledged its one message."""
    body = json.dumps({"messages": [{"payload": "YWJj"}]}).encode()
    assert call(f"{svc.url}/v1{TOPIC}/messages", body=body)[0] == 200
    consumer = subscribe(svc, PATH, "s")
    ids = receive(svc, PATH, "s", consumer)
    assert len(ids) == 1
    status, answer, _ = _ack(svc, consumer, ids)
    assert (status, answer) == (200, {"acknowledged": 1})
    return consumer


def _ack(svc, consumer: str, ids: list[str]):
    url = f"{svc.url}/v1{TOPIC}/subscriptions/s/consumers/{consumer}/ack"
    return call(url, body=json.dumps({"messageIds": ids}).encode())


def test_a_seek_to_a_negative_timestamp_is_a_400_and_delivers_nothing_again(svc):
    consumer = _consumer_with_everything_acknowledged(svc)
    url = f"{svc.url}/v1{TOPIC}/subscriptions/s/consumers/{consumer}/seek"
    assert_error(call(url, body=b'{"timestamp": -5}'), 400, "InvalidMessage", "timestamp")
    assert receive(svc, PATH, "s", consumer) == []


def test_an_admin_cursor_reset_to_a_negative_timestamp_is_a_412_and_delivers_nothing_again(svc):
    consumer = _consumer_with_everything_acknowledged(svc)
    url = f"{svc.url}/admin/v2/{PATH}/subscription/s/resetcursor/-5"
    assert_error(call(url), 412, "PreconditionFailed", "timestamp")
    assert receive(svc, PATH, "s", consumer) == []


@pytest.mark.parametrize(
    ("message_id", "part"),
    [
        (f"{2**63}:0:-1:-1", "ledger_id"),
        (f"1:{2**64}:-1:-1", "entry_id"),
        (f"1:0:{2**31}:-1", "partition"),
        (f"1:0:-1:{2**31}", "batch_index"),
        ("1:" + "9" * 5000, "entry_id"),
    ],
)
def test_an_ack_of_an_id_part_beyond_its_java_type_is_a_400_naming_the_part(svc, message_id, part):
    consumer = subscribe(svc, PATH, "s")
    assert_error(_ack(svc, consumer, [message_id]), 400, "InvalidMessage", part, "at most")


@pytest.mark.parametrize("value", ["null", "1", "yes", "tru"])
def test_a_force_that_is_neither_true_nor_false_is_a_400_and_deletes_nothing(svc, value):
    subscribe(svc, PATH, "s")
    answer = call(f"{svc.url}/admin/v2/{PATH}?force={value}", method="DELETE")
    assert_error(answer, 400, "InvalidMessage", "force", "true or false")
    assert call(f"{svc.url}/admin/v2/{PATH}/stats", method="GET")[0] == 200


def test_an_applied_that_is_neither_true_nor_false_is_a_400_naming_it(svc):
    subscribe(svc, PATH, "s")
    answer = call(f"{svc.url}/admin/v2/{PATH}/retention?applied=null", method="GET")
    assert_error(answer, 400, "InvalidMessage", "applied", "true or false")


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_force_true_in_any_case_still_deletes_a_topic_with_consumers(svc, value):
    subscribe(svc, PATH, "s")
    assert call(f"{svc.url}/admin/v2/{PATH}?force={value}", method="DELETE")[0] == 204


@pytest.mark.parametrize("kind", ["text/xml", "application/xml", "text/plain; charset=utf-8"])
def test_a_json_body_sent_as_another_media_type_is_a_415_and_stores_nothing(svc, kind):
    body = json.dumps({"messages": [{"payload": "YWJj"}]}).encode()
    answer = call(f"{svc.url}/v1{TOPIC}/messages", body=body, headers={"Content-Type": kind})
    assert_error(answer, 415, "UnsupportedMediaType", "application/json")
    consumer = subscribe(svc, PATH, "s")
    assert receive(svc, PATH, "s", consumer) == []


def test_an_admin_json_body_sent_as_text_xml_is_a_415(svc):
    subscribe(svc, PATH, "s")
    url = f"{svc.url}/admin/v2/{PATH}/subscription/s/resetcursor"
    answer = call(
        url, body=b'{"ledgerId": -1, "entryId": -1}', headers={"Content-Type": "text/xml"}
    )
    assert_error(answer, 415, "UnsupportedMediaType", "text/xml")


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json"},
        {"Content-Type": "application/json; charset=utf-8"},
        {"Content-Type": "application/vnd.pulsar+json"},
        {"Content-Type": "application/x-www-form-urlencoded"},
    ],
)
def test_a_json_body_sent_as_json_or_as_curl_sends_it_is_accepted(svc, headers):
    body = json.dumps({"messages": [{"payload": "YWJj"}]}).encode()
    answer = call(f"{svc.url}/v1{TOPIC}/messages", body=body, headers=headers)
    assert answer[0] == 200, answer


def test_a_json_body_sent_without_a_content_type_is_accepted(svc):
    connection = http.client.HTTPConnection(urlsplit(svc.url).netloc, timeout=30)
    body = json.dumps({"messages": [{"payload": "YWJj"}]})
    connection.request("POST", f"/v1{TOPIC}/messages", body=body)  # no Content-Type sent
    response = connection.getresponse()
    assert response.status == 200, response.read()
    connection.close()


@pytest.mark.parametrize(
    ("method", "verb", "allow"),
    [
        ("PATCH", "subscription/s/skip_all", "POST"),
        ("GET", "subscription/s/resetcursor/5", "POST"),
        ("POST", "stats", "GET"),
    ],
)
def test_an_admin_path_under_a_method_it_does_not_take_is_a_405_naming_the_allowed_ones(
    svc, method, verb, allow
):
    subscribe(svc, PATH, "s")
    answer = call(f"{svc.url}/admin/v2/{PATH}/{verb}", method=method)
    assert_error(answer, 405, "NotAllowed", method, allow)
    assert answer[2]["Allow"] == allow


def test_an_admin_path_no_route_has_is_still_a_404(svc):
    answer = call(f"{svc.url}/admin/v2/{PATH}/no-such-verb", method="GET")
    assert_error(answer, 404, "NotFound", "no-such-verb")


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", f"/v1{TOPIC}/messages", "POST"),
        ("PUT", f"/v1{TOPIC}/subscriptions/s/consumers/c/ack", "POST"),
    ],
)
def test_a_data_path_under_a_method_it_does_not_take_is_a_405_naming_the_allowed_ones(
    svc, method, path, allow
):
    answer = call(f"{svc.url}{path}", method=method)
    assert_error(answer, 405, "NotAllowed", method, allow)
    assert answer[2]["Allow"] == allow


def test_a_data_path_no_route_has_is_still_a_404(svc):
    assert_error(call(f"{svc.url}/v1{TOPIC}/nothing", method="GET"), 404, "NotFound", "nothing")
