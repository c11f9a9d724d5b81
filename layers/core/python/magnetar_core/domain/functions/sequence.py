"""The ids a function's outputs are published with, for effectively-once publication.

Each output is published by a producer named after the function, the input partition, its
ledger and which output it is (the return value, or the n-th ``context.publish`` of the
record) (``producer_name``), with the input message's position in that ledger as sequence
id (``sequence_id``): a retried record publishes the same (producer, sequence) again, which
deduplication drops. Positions of one ledger increase with its order, so sequence ids do too
while records are processed in order; an input topic created again has a new ledger (ledger
ids are epoch-ms based, far too large to pack into a sequence id), so a new producer.
"""

from __future__ import annotations

from magnetar_wire.ids import parse_message_id

ENTRY_BITS = 48
BATCH_BITS = 14


def sequence_id(message_id: str) -> int:
    """``entry << 14 | batch index + 1`` of ``"l:e:p:b"``: increasing with the position in
    one ledger, below 2**63. Raises ValueError for a malformed id or one past those bounds
    (2**48 entries, 16383 messages in a batch)."""
    _ledger, entry, _partition, batch = parse_message_id(message_id)
    if not (0 <= entry < 1 << ENTRY_BITS and batch + 1 < 1 << BATCH_BITS):
        raise ValueError(f"Message id {message_id} is past the bounds of a function's sequence ids")
    return entry << BATCH_BITS | (batch + 1)


def producer_name(fqfn: str, input_topic: str, message_id: str, index: int | None = None) -> str:
    """The producer of function ``fqfn``'s outputs for records of partition ``input_topic``
    in the ledger of ``message_id``: the return value's (``index`` None), or the ``index``-th
    ``context.publish`` of a record (0, 1, ...). Raises ValueError for a malformed id."""
    ledger = parse_message_id(message_id)[0]
    suffix = "" if index is None else f"#{index}"
    return f"{fqfn}@{input_topic}@{ledger}{suffix}"
