"""Consumer policies, named and validated as in pulsar-client."""

from __future__ import annotations

from ._enums import KeySharedMode
from ._validate import check_type, check_type_or_none

__all__ = [
    "ConsumerBatchReceivePolicy",
    "ConsumerDeadLetterPolicy",
    "ConsumerKeySharedPolicy",
    "MultiplierRedeliveryBackoff",
    "backoff_body",
    "dead_letter_body",
]


class ConsumerBatchReceivePolicy:
    """Limits of ``Consumer.batch_receive``: messages (-1 = no limit), bytes, wait time."""

    def __init__(self, max_num_message: int, max_num_bytes: int, timeout_ms: int) -> None:
        check_type(int, max_num_message, "max_num_message")
        check_type(int, max_num_bytes, "max_num_bytes")
        check_type(int, timeout_ms, "timeout_ms")
        if max_num_message <= 0 and max_num_bytes <= 0 and timeout_ms <= 0:
            raise ValueError("At least one of max_num_message, max_num_bytes, timeout_ms > 0")
        self._max_num_message = max_num_message
        self._max_num_bytes = max_num_bytes
        self._timeout_ms = timeout_ms

    def max_num_message(self) -> int:
        """Most messages per batch (-1: no limit)."""
        return self._max_num_message

    def max_num_bytes(self) -> int:
        """Most payload bytes per batch (-1: no limit)."""
        return self._max_num_bytes

    def timeout_ms(self) -> int:
        """How long to wait for the batch to fill."""
        return self._timeout_ms


DEFAULT_BATCH_RECEIVE = ConsumerBatchReceivePolicy(-1, 10 * 1024 * 1024, 100)


class ConsumerDeadLetterPolicy:
    """Publish a message to a dead-letter topic once it was delivered
    ``max_redeliver_count + 1`` times (the service does it: ``deadLetterPolicy`` in the
    subscribe body). ``retry_letter_topic`` (a Magnetar extra, as the Java client's
    ``retryLetterTopic``) names the topic of ``Consumer.reconsume_later`` with
    ``enable_retry=True`` (default ``<topic>-<subscription>-RETRY``).

    Raises ValueError for a count below 1 or arguments of the wrong type.
    """

    def __init__(
        self,
        max_redeliver_count: int,
        dead_letter_topic: str | None = None,
        initial_subscription_name: str | None = None,
        retry_letter_topic: str | None = None,
    ) -> None:
        check_type(int, max_redeliver_count, "max_redeliver_count")
        check_type_or_none(str, dead_letter_topic, "dead_letter_topic")
        check_type_or_none(str, initial_subscription_name, "initial_subscription_name")
        check_type_or_none(str, retry_letter_topic, "retry_letter_topic")
        if max_redeliver_count < 1:
            raise ValueError("max_redeliver_count must be >= 1")
        self._max = max_redeliver_count
        self._topic = dead_letter_topic
        self._initial = initial_subscription_name
        self._retry = retry_letter_topic

    @property
    def max_redeliver_count(self) -> int:
        """Deliveries before a message goes to the dead-letter topic (minus one)."""
        return self._max

    @property
    def dead_letter_topic(self) -> str | None:
        """The DLQ topic (default ``<topic>-<subscription>-DLQ``)."""
        return self._topic

    @property
    def initial_subscription_name(self) -> str | None:
        """A subscription created on the DLQ topic before its first publish."""
        return self._initial

    @property
    def retry_letter_topic(self) -> str | None:
        """The retry topic of ``reconsume_later`` (default ``<topic>-<subscription>-RETRY``)."""
        return self._retry


def dead_letter_body(policy: ConsumerDeadLetterPolicy, dead_letter_topic: str | None) -> dict:
    """The subscribe body's ``deadLetterPolicy`` (docs/http-api/consuming.md, "Subscribe"); ``dead_letter_topic`` is
    the policy's topic as a full name (None: the service's default)."""
    return {
        "maxRedeliverCount": policy.max_redeliver_count,
        "deadLetterTopic": dead_letter_topic,
        "initialSubscriptionName": policy.initial_subscription_name,
    }


class MultiplierRedeliveryBackoff:
    """Redelivery delays growing by a multiplier, as the Java client's
    ``MultiplierRedeliveryBackoff``: ``min(max_delay_ms, min_delay_ms * multiplier**count)``
    ms before redelivering a message delivered ``count + 1`` times (defaults: 1, 2, 4, 8, 16,
    32, 60, 60 s). Used by ``negative_ack_redelivery_backoff`` and
    ``ack_timeout_redelivery_backoff``; the service applies it (it knows each count).

    Raises ValueError for a negative minimum, a maximum below it, a multiplier below 1, or
    arguments of the wrong type.
    """

    def __init__(
        self, min_delay_ms: int = 1000, max_delay_ms: int = 60_000, multiplier: float = 2.0
    ) -> None:
        check_type(int, min_delay_ms, "min_delay_ms")
        check_type(int, max_delay_ms, "max_delay_ms")
        if isinstance(multiplier, bool) or not isinstance(multiplier, int | float):
            raise ValueError(
                "Argument multiplier is expected to be of type 'float' and not "
                f"'{type(multiplier).__name__}'"
            )
        if min_delay_ms < 0 or max_delay_ms < min_delay_ms:
            raise ValueError("The backoff needs 0 <= min_delay_ms <= max_delay_ms")
        if multiplier < 1:
            raise ValueError("The backoff multiplier must be >= 1")
        self._min = min_delay_ms
        self._max = max_delay_ms
        self._multiplier = float(multiplier)

    @property
    def min_delay_ms(self) -> int:
        """The first delay (ms)."""
        return self._min

    @property
    def max_delay_ms(self) -> int:
        """The largest delay (ms)."""
        return self._max

    @property
    def multiplier(self) -> float:
        """The growth factor from one redelivery to the next."""
        return self._multiplier

    def next(self, redelivery_count: int) -> int:
        """The delay (ms) before redelivering a message whose redelivery count is
        ``redelivery_count`` (Java's ``RedeliveryBackoff.next``)."""
        if redelivery_count <= 0 or self._min <= 0:
            return self._min
        return int(min(self._max, self._min * self._multiplier ** min(redelivery_count, 64)))


def backoff_body(backoff: MultiplierRedeliveryBackoff) -> dict:
    """The nack body's ``backoff`` object (docs/http-api/consuming.md, "Negative acknowledge")."""
    return {
        "minDelayMs": backoff.min_delay_ms,
        "maxDelayMs": backoff.max_delay_ms,
        "multiplier": backoff.multiplier,
    }


class ConsumerKeySharedPolicy:
    """Key_Shared options: mode, out-of-order delivery, sticky hash ranges."""

    def __init__(
        self,
        key_shared_mode: KeySharedMode = KeySharedMode.AutoSplit,
        allow_out_of_order_delivery: bool = False,
        sticky_ranges: list[tuple[int, int]] | None = None,
    ) -> None:
        check_type(KeySharedMode, key_shared_mode, "key_shared_mode")
        check_type(bool, allow_out_of_order_delivery, "allow_out_of_order_delivery")
        check_type_or_none(list, sticky_ranges, "sticky_ranges")
        if key_shared_mode == KeySharedMode.Sticky and not sticky_ranges:
            raise ValueError(
                "When using key_shared_mode = Sticky you must also provide sticky_ranges"
            )
        ranges = sorted((start, end) for start, end in (sticky_ranges or []))
        for start, end in ranges:
            if not (0 <= start <= end <= 65535):
                raise ValueError(
                    f"Ranges must be within 0..65535 with start <= end: {(start, end)}"
                )
        for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
            if start <= end:
                raise ValueError(f"Ranges may not overlap: {ranges}")
        self._mode = key_shared_mode
        self._ooo = allow_out_of_order_delivery
        self._ranges = ranges

    @property
    def key_shared_mode(self) -> KeySharedMode:
        """AutoSplit or Sticky."""
        return self._mode

    @property
    def allow_out_of_order_delivery(self) -> bool:
        """Whether ordering per key may be relaxed when consumers change."""
        return self._ooo

    @property
    def sticky_ranges(self) -> list[tuple[int, int]]:
        """Inclusive hash ranges of a Sticky consumer."""
        return list(self._ranges)


def key_shared_body(policy: ConsumerKeySharedPolicy) -> dict:
    """The subscribe body fields of a Key_Shared policy (docs/http-api/consuming.md, "Subscribe")."""
    body: dict = {
        "keySharedMode": "Sticky"
        if policy.key_shared_mode == KeySharedMode.Sticky
        else "AutoSplit",
        "allowOutOfOrderDelivery": policy.allow_out_of_order_delivery,
    }
    if policy.key_shared_mode == KeySharedMode.Sticky:
        body["stickyRanges"] = [list(r) for r in policy.sticky_ranges]
    return body
