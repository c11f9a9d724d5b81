"""Reading what a receive handed out, shared by the integration tests."""

from __future__ import annotations

from magnetar_wire import decode_entry
from magnetar_wire.ids import format_message_id


def payloads(delivered) -> list[bytes]:
    """The payloads of delivered entries, honouring each entry's delivery mask."""
    out = []
    for d in delivered:
        messages = decode_entry(d.data).messages
        indexes = d.batch_indexes if d.batch_indexes is not None else range(len(messages))
        out.extend(messages[i].payload for i in indexes)
    return out


def entry_ids(delivered) -> list[str]:
    """Whole-entry message ids (batch index -1) of delivered entries, to ack or nack them."""
    return [format_message_id(d.ledger_id, d.entry_id, d.partition, -1) for d in delivered]
