"""The log table's DynamoDB Stream, pure: which topics a batch of stream records committed to.

The log (index) table's stream carries KEYS_ONLY images; every committed entry is an INSERT
of ``{"pk": "<partition topic>|<ledger id>", "eid": <entry id>}`` (``domain.log.log_key``).
``committed_topics`` groups a Lambda stream event's records by the *base* topic of their
partition (what ``Triggers.of_topic`` lists the triggers of), keeping each record's
``SequenceNumber``: the ``itemIdentifier`` Lambda's ReportBatchItemFailures takes back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from magnetar_wire.errors import InvalidTopicName
from magnetar_wire.names import TopicName


@dataclass(frozen=True)
class Commits:
    """A stream batch, read: ``topics`` maps each base topic's full name to the sequence
    numbers of its records (in the batch's order, topics in order of first appearance);
    ``skipped`` holds ``(sequence number, why)`` of the records that wake nothing (not an
    INSERT, or a key that is no log key: no retry could change that)."""

    topics: dict[str, list[str]] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def committed_topics(event: Mapping[str, Any]) -> Commits:
    """Read a DynamoDB Streams Lambda event (``{"Records": [...]}``); never raises: a record
    it cannot read is ``skipped`` with the reason."""
    commits = Commits()
    records = event.get("Records") if isinstance(event, Mapping) else None
    for record in records if isinstance(records, list) else []:
        sequence, topic, why = _read(record)
        if topic is None:
            commits.skipped.append((sequence, why))
        else:
            commits.topics.setdefault(topic, []).append(sequence)
    return commits


def _read(record: Any) -> tuple[str, str | None, str]:
    """``(sequence number, base topic or None, why None)`` of one stream record."""
    data = record.get("dynamodb") if isinstance(record, Mapping) else None
    if not isinstance(data, Mapping):
        return "", None, "not a DynamoDB stream record"
    sequence = str(data.get("SequenceNumber", ""))
    if record.get("eventName") != "INSERT":
        return sequence, None, f"a {record.get('eventName')} record, not an INSERT"
    keys = data.get("Keys")
    pk = keys.get("pk") if isinstance(keys, Mapping) else None
    value = pk.get("S") if isinstance(pk, Mapping) else None
    if not isinstance(value, str) or "|" not in value:
        return sequence, None, f"key {value!r} is no log key <topic>|<ledger>"
    topic, _, ledger = value.rpartition("|")
    if not ledger.isdigit():
        return sequence, None, f"key {value!r} is no log key <topic>|<ledger>"
    try:
        return sequence, str(TopicName.parse(topic).base), ""
    except InvalidTopicName as error:
        return sequence, None, f"key {value!r}: {error}"
