"""Acknowledgements: individual, batch-index and cumulative acks; nacks; redelivery."""

from __future__ import annotations

from magnetar_wire.ids import parse_message_id

from .cursor import EXCLUSIVE, FAILOVER, CursorState
from .errors import ConsumerNotFound, CumulativeAcknowledgementNotAllowedError, InvalidMessage
from .names import TopicName
from .subscription_base import SubscriptionBase
from .topics import PartitionRef


class Acknowledgements(SubscriptionBase):
    """Changes of a cursor on behalf of one consumer's acks and nacks."""

    def acknowledge(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        message_ids: list[str],
        cumulative: bool,
    ) -> int:
        """Acknowledge messages; returns how many positions changed the cursor.

        Raises InvalidMessage (bad ids), ConsumerNotFound,
        CumulativeAcknowledgementNotAllowedError (cumulative on Shared or Key_Shared).
        """
        ref = self._topics.resolve(topic, create=False, allow_non_persistent=True)
        positions = _positions(message_ids, ref)

        def change(state: CursorState) -> tuple[int, bool]:
            if consumer_id not in state.consumers:
                raise ConsumerNotFound(f"Consumer {consumer_id} is not connected to {subscription}")
            if cumulative:
                if state.sub_type not in (EXCLUSIVE, FAILOVER):
                    raise CumulativeAcknowledgementNotAllowedError(
                        f"Cumulative acknowledgement is not allowed on {state.sub_type} subscriptions"
                    )
                if not positions:
                    return 0, False
                done = state.acknowledge_cumulative(*max(positions))
            else:
                done = state.acknowledge(positions, self._hashes_of(ref))
            return done, done > 0

        return self._update(ref, subscription, change)

    def negative_acknowledge(
        self, topic: TopicName, subscription: str, consumer_id: str, message_ids: list[str]
    ) -> int:
        """Send the entries of these messages back for redelivery; returns how many."""
        ref = self._topics.resolve(topic, create=False, allow_non_persistent=True)
        entry_ids = [entry for entry, _ in _positions(message_ids, ref)]

        def change(state: CursorState) -> tuple[int, bool]:
            self._require_consumer(state, consumer_id)
            moved = state.negative_acknowledge(consumer_id, entry_ids, self._hashes_of(ref))
            return moved, moved > 0

        return self._update(ref, subscription, change)

    def redeliver_unacknowledged(
        self, topic: TopicName, subscription: str, consumer_id: str
    ) -> int:
        """Send everything in flight to this consumer back for redelivery; returns how many."""
        ref = self._topics.resolve(topic, create=False, allow_non_persistent=True)

        def change(state: CursorState) -> tuple[int, bool]:
            self._require_consumer(state, consumer_id)
            moved = state.redeliver_all(consumer_id, self._hashes_of(ref))
            return moved, moved > 0

        return self._update(ref, subscription, change)


def _positions(message_ids: list[str], ref: PartitionRef) -> list[tuple[int, int]]:
    """``(entry_id, batch_index)`` of the ids that belong to this partition's ledger."""
    if not isinstance(message_ids, list) or not all(isinstance(m, str) for m in message_ids):
        raise InvalidMessage("messageIds must be a list of message id strings like '1:0:-1:-1'")
    out = []
    for text in message_ids:
        try:
            ledger, entry, partition, batch = parse_message_id(text)
        except ValueError as exc:
            raise InvalidMessage(str(exc)) from exc
        if ledger == ref.ledger_id and partition == ref.partition and entry >= 0:
            out.append((entry, batch))
    return out
