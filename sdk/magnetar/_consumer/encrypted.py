"""Receiving encrypted entries: what a consumer or reader does when it cannot decrypt one
(``crypto_failure_action``, as pulsar-client):

- FAIL (the default): the messages are not delivered and not acknowledged (an error is
  logged); they stay pending for the subscription, so the consumer fails on them again when
  they come back (a redelivery, another consumer, a restart);
- DISCARD: the messages are acknowledged and skipped (a warning is logged);
- CONSUME: ONE message for the entry is delivered, its payload the stored payload section
  (compressed, then encrypted: the application decrypts it), the first message's metadata
  (keys, properties, times) and ``encryption_context().is_decryption_failed()`` True; a
  batch stays one message (id with batch index -1; ``batch_size()`` tells how many).

A consumer without ``crypto_key_reader`` cannot decrypt any encrypted entry (as Pulsar).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from magnetar._enums import ConsumerCryptoFailureAction
from magnetar.encryption import EncryptionContext
from magnetar.message import Message, MessageId
from magnetar_wire import read_metadata, stored_payload

if TYPE_CHECKING:
    from .core import Core
    from .sub import Sub

__all__ = ["undecryptable"]


def undecryptable(core: Core, sub: Sub, e: dict, raw: bytes, why: Exception) -> list[Message]:  # fmt: skip
    """The messages to deliver of the encrypted entry ``raw`` (receive item ``e``) that could
    not be decrypted (``why``): none (FAIL, DISCARD) or one (CONSUME); see the module."""
    md = read_metadata(raw)
    h = md.header
    topic = e.get("topic") or sub.topic
    partition = e.get("partition", sub.partition)
    where = f"entry {e['ledgerId']}:{e['entryId']} of {topic}"
    action = core.crypto.action
    if action == ConsumerCryptoFailureAction.FAIL:
        core.log.error("cannot decrypt %s, not delivered (crypto_failure_action FAIL): %s", where, why)  # fmt: skip
        return []
    mask = e.get("batchIndexes")
    if action == ConsumerCryptoFailureAction.DISCARD:
        core.log.warning("cannot decrypt %s, discarded (acknowledged): %s", where, why)
        for i in range(h.count):
            if mask is None or i in mask:
                mid = MessageId(partition, e["ledgerId"], e["entryId"], i if h.batched else -1)
                mid._topic = topic
                core.ack_tracker.ack(sub, mid)
        return []
    mid = MessageId(partition, e["ledgerId"], e["entryId"], -1)
    mid._topic = topic
    first = md.messages[0]
    assert md.encryption is not None  # only encrypted entries fail to decrypt
    return [Message(
        stored_payload(raw), mid, topic=topic, properties=dict(first.properties),
        partition_key=first.key, ordering_key=first.ordering_key,
        publish_timestamp=first.publish_time_ms, event_timestamp=first.event_time_ms,
        redelivery_count=e.get("redeliveryCount", 0), producer_name=md.producer_name,
        sequence_id=first.sequence_id, schema=core.schema,
        schema_version=first.schema_version,
        encryption=EncryptionContext(md.encryption, h, failed=True),
    )]  # fmt: skip
