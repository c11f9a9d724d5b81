"""Inbound source events, pure: what AWS sends the ingest function, read into ``SourceEvent``.

Four shapes (docs/architecture/inbound.md; samples in events/inbound/):

- S3 ``ObjectCreated:*`` notifications, sent directly (``{"Records": [{"eventSource":
  "aws:s3", ...}]}``) or through EventBridge (``"source": "aws.s3"``, ``"detail-type":
  "Object Created"``): both read as kind ``s3`` with the same fields and the same id
  (bucket, object key and the object's ``sequencer``), so one upload is one message whichever
  way (or both ways) it arrives;
- SNS notifications (``{"Records": [{"EventSource": "aws:sns", "Sns": {...}}]}``): kind
  ``sns``, id the ``MessageId``;
- other EventBridge events (rules): kind ``eventbridge``, id the event's ``id``;
- EventBridge Scheduler invocations, whose input the template builds from the scheduler's
  context attributes (``{"scheduleArn", "scheduledTime", "executionId", "attemptNumber",
  "payload"}``): kind ``schedule``, id the schedule ARN and its scheduled time (the same for
  every retry of one occurrence).

Every reader raises ``InvalidMessage`` naming what is missing or wrong; an S3 ``s3:TestEvent``
reads as no events at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote_plus

from magnetar_core.domain.errors import InvalidMessage

S3, SNS, EVENTBRIDGE, SCHEDULE = "s3", "sns", "eventbridge", "schedule"
KINDS = (S3, SNS, EVENTBRIDGE, SCHEDULE)
_S3_REASONS = {  # EventBridge's detail.reason -> the notification's eventName suffix
    "PutObject": "Put",
    "POST Object": "Post",
    "CopyObject": "Copy",
    "CompleteMultipartUpload": "CompleteMultipartUpload",
}
_MAX_DETAIL_DEPTH = 4
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class SourceEvent:
    """One event of a source: its kind, its source's name (bucket, SNS topic ARN,
    EventBridge ``source`` or schedule ARN), the id redeliveries share, its time (ms since
    the epoch), the named fields a route maps to a key and properties, and the payload."""

    kind: str
    name: str
    event_id: str
    time_ms: int
    fields: Mapping[str, str]
    payload: bytes


def read_events(event: Any) -> list[SourceEvent]:
    """The source events in one Lambda invocation's ``event``; raises InvalidMessage."""
    if not isinstance(event, Mapping):
        raise InvalidMessage(f"An inbound event is a JSON object, not {type(event).__name__}")
    if "Records" in event:
        records = event["Records"]
        if not isinstance(records, list) or not records:
            raise InvalidMessage("'Records' must be a non-empty list")
        return [_record(i, r) for i, r in enumerate(records)]
    if event.get("Event") == "s3:TestEvent":
        return []
    if "detail-type" in event:
        return [_eventbridge(event)]
    if "scheduleArn" in event:
        return [_schedule(event)]
    raise InvalidMessage(
        "Not an inbound event this function reads: expected S3 or SNS 'Records', an "
        "EventBridge event ('detail-type') or a schedule invocation ('scheduleArn'); "
        f"got the keys {sorted(event)[:10]}"
    )


def _record(index: int, record: Any) -> SourceEvent:
    if not isinstance(record, Mapping):
        raise InvalidMessage(f"Records[{index}] must be an object")
    if record.get("eventSource") == "aws:s3":
        return _s3_record(index, record)
    if record.get("EventSource") == "aws:sns":
        return _sns_record(index, record)
    source = record.get("eventSource", record.get("EventSource"))
    raise InvalidMessage(f"Records[{index}]: event source {source!r} is neither aws:s3 nor aws:sns")


def _s3_record(index: int, record: Mapping[str, Any]) -> SourceEvent:
    where = f"Records[{index}]"
    name = _text(record, "eventName", where)
    if not name.startswith("ObjectCreated:"):
        raise InvalidMessage(f"{where}: only ObjectCreated events are read, not {name!r}")
    s3 = _object(record, "s3", where)
    bucket = _text(_object(s3, "bucket", f"{where}.s3"), "name", f"{where}.s3.bucket")
    obj = dict(_object(s3, "object", f"{where}.s3"))
    obj["key"] = unquote_plus(_text(obj, "key", f"{where}.s3.object"))  # S3 URL-encodes it here
    return _s3_event(
        bucket,
        obj,
        name,
        _text(record, "eventTime", where),
        str(record.get("awsRegion", "")),
        f"{where}.s3.object",
    )


def _s3_event(
    bucket: str, obj: Mapping[str, Any], name: str, time: str, region: str, where: str
) -> SourceEvent:
    key = _text(obj, "key", where)
    sequencer = _text(obj, "sequencer", where)
    fields = {
        "bucket": bucket,
        "key": key,
        "size": str(obj.get("size", "")),
        "etag": str(obj.get("eTag", obj.get("etag", ""))),
        "sequencer": sequencer,
        "eventName": name,
        "region": region,
        "time": time,
    }
    if obj.get("versionId") or obj.get("version-id"):
        fields["versionId"] = str(obj.get("versionId") or obj.get("version-id"))
    payload = json.dumps(fields, separators=(",", ":"), sort_keys=True).encode()
    event_id = f"{bucket}/{key}@{sequencer}"
    return SourceEvent(S3, bucket, event_id, _time_ms(time, where), fields, payload)


def _sns_record(index: int, record: Mapping[str, Any]) -> SourceEvent:
    where = f"Records[{index}].Sns"
    sns = _object(record, "Sns", f"Records[{index}]")
    arn = _text(sns, "TopicArn", where)
    message_id = _text(sns, "MessageId", where)
    time = _text(sns, "Timestamp", where)
    message = sns.get("Message")
    if not isinstance(message, str):
        raise InvalidMessage(f"{where}.Message must be a string")
    fields = {
        "topicArn": arn,
        "messageId": message_id,
        "type": str(sns.get("Type", "")),
        "subject": str(sns.get("Subject") or ""),
        "timestamp": time,
    }
    attributes = sns.get("MessageAttributes") or {}
    if not isinstance(attributes, Mapping):
        raise InvalidMessage(f"{where}.MessageAttributes must be an object")
    for attr, value in attributes.items():
        if isinstance(value, Mapping) and "Value" in value:
            fields[f"attributes.{attr}"] = str(value["Value"])
    return SourceEvent(SNS, arn, message_id, _time_ms(time, where), fields, message.encode())


def _eventbridge(event: Mapping[str, Any]) -> SourceEvent:
    where = "the EventBridge event"
    source = _text(event, "source", where)
    detail_type = _text(event, "detail-type", where)
    time = _text(event, "time", where)
    if source == "aws.s3" and detail_type == "Object Created":
        detail = _object(event, "detail", where)
        bucket = _text(_object(detail, "bucket", "detail"), "name", "detail.bucket")
        reason = str(detail.get("reason", ""))
        name = f"ObjectCreated:{_S3_REASONS.get(reason, reason)}"
        obj = _object(detail, "object", "detail")
        return _s3_event(bucket, obj, name, time, str(event.get("region", "")), "detail.object")
    event_id = _text(event, "id", where)
    resources = event.get("resources") or []
    fields = {
        "id": event_id,
        "source": source,
        "detailType": detail_type,
        "account": str(event.get("account", "")),
        "region": str(event.get("region", "")),
        "time": time,
        "resources": ",".join(str(r) for r in resources) if isinstance(resources, list) else "",
    }
    content = event.get("detail")
    if isinstance(content, Mapping):
        _flatten(content, "detail", fields, 1)
    payload = json.dumps(event, separators=(",", ":")).encode()
    return SourceEvent(EVENTBRIDGE, source, event_id, _time_ms(time, where), fields, payload)


def _schedule(event: Mapping[str, Any]) -> SourceEvent:
    where = "the schedule invocation"
    arn = _text(event, "scheduleArn", where)
    time = _text(event, "scheduledTime", where)
    fields = {
        "scheduleArn": arn,
        "scheduledTime": time,
        "executionId": str(event.get("executionId", "")),
        "attemptNumber": str(event.get("attemptNumber", "")),
    }
    payload = json.dumps(event.get("payload", {}), separators=(",", ":")).encode()
    return SourceEvent(SCHEDULE, arn, f"{arn}@{time}", _time_ms(time, where), fields, payload)


def _flatten(obj: Mapping[str, Any], prefix: str, out: dict[str, str], depth: int) -> None:
    """Scalar values of ``obj`` as ``prefix.a.b`` fields, ``_MAX_DETAIL_DEPTH`` levels deep."""
    for name, value in obj.items():
        path = f"{prefix}.{name}"
        if isinstance(value, Mapping):
            if depth < _MAX_DETAIL_DEPTH:
                _flatten(value, path, out, depth + 1)
        elif isinstance(value, bool):
            out[path] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[path] = str(value)


def _object(parent: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    value = parent.get(name)
    if not isinstance(value, Mapping):
        raise InvalidMessage(f"{where}.{name} must be an object")
    return value


def _text(parent: Mapping[str, Any], name: str, where: str) -> str:
    value = parent.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidMessage(f"{where}.{name} must be a non-empty string")
    return value


def _time_ms(text: str, where: str) -> int:
    """ISO 8601 time (``2026-11-24T20:00:00.123Z`` or ``...Z`` without fraction) -> ms."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidMessage(f"{where}: {text!r} is not an ISO 8601 time") from exc
    if moment.tzinfo is None:  # AWS writes UTC; a time without a zone is read as UTC too
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)
