"""The delivery contract: the records JSON, the webhook signature and batchItemFailures."""

from __future__ import annotations

import base64
import json

from magnetar_core.domain.triggers.records import (
    TargetAnswer,
    TriggerRecord,
    batch_body,
    failed_items,
    signature,
    verify,
)

RECORD = TriggerRecord("1:2:-1:-1", "persistent://t/n/a", "k", b"\x01", b"hi", {"p": "v"}, 5, 0, 1)


def test_a_batch_is_the_documented_records_json():
    body = json.loads(batch_body([RECORD]))
    assert body == {
        "records": [
            {
                "messageId": "1:2:-1:-1",
                "topic": "persistent://t/n/a",
                "key": "k",
                "orderingKey": base64.b64encode(b"\x01").decode(),
                "payload": base64.b64encode(b"hi").decode(),
                "properties": {"p": "v"},
                "publishTime": 5,
                "eventTime": 0,
                "redeliveryCount": 1,
            }
        ]
    }


def test_the_signature_covers_the_timestamp_and_the_body():
    header = signature("s", 1000, b"{}")
    assert header.startswith("sha256=") and len(header) == 7 + 64
    assert verify("s", 1000, b"{}", header)
    assert not verify("s", 1001, b"{}", header)
    assert not verify("s", 1000, b"{ }", header)
    assert not verify("other", 1000, b"{}", header)


def test_batch_item_failures_name_the_messages_to_retry():
    answer = TargetAnswer(200, b'{"batchItemFailures": [{"itemIdentifier": "b"}]}')
    assert failed_items(answer, ["a", "b"]) == {"b"}


def test_a_2xx_without_a_report_acknowledges_everything():
    assert failed_items(TargetAnswer(204), ["a"]) == set()
    assert failed_items(TargetAnswer(200, b"not json"), ["a"]) == set()
    assert failed_items(TargetAnswer(200, b'{"batchItemFailures": []}'), ["a"]) == set()


def test_a_non_2xx_or_a_malformed_report_fails_the_whole_batch():
    assert failed_items(TargetAnswer(500), ["a"]) is None
    assert failed_items(TargetAnswer(200, b'{"batchItemFailures": [{"itemIdentifier": "z"}]}'), ["a"]) is None  # fmt: skip
    assert failed_items(TargetAnswer(200, b'{"batchItemFailures": "a"}'), ["a"]) is None
