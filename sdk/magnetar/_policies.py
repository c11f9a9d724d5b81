"""Consumer policies, named and validated as in pulsar-client."""

from __future__ import annotations

from ._enums import KeySharedMode
from ._validate import check_type, check_type_or_none

__all__ = ["ConsumerBatchReceivePolicy", "ConsumerDeadLetterPolicy", "ConsumerKeySharedPolicy"]


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
    """Publish a message to a dead-letter topic after ``max_redeliver_count`` redeliveries."""

    def __init__(
        self,
        max_redeliver_count: int,
        dead_letter_topic: str | None = None,
        initial_subscription_name: str | None = None,
    ) -> None:
        check_type(int, max_redeliver_count, "max_redeliver_count")
        check_type_or_none(str, dead_letter_topic, "dead_letter_topic")
        check_type_or_none(str, initial_subscription_name, "initial_subscription_name")
        if max_redeliver_count < 1:
            raise ValueError("max_redeliver_count must be >= 1")
        self._max = max_redeliver_count
        self._topic = dead_letter_topic
        self._initial = initial_subscription_name

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
        ranges = sorted(tuple(r) for r in (sticky_ranges or []))
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
    """The subscribe body fields of a Key_Shared policy (docs/http-api.md)."""
    body: dict = {
        "keySharedMode": "Sticky"
        if policy.key_shared_mode == KeySharedMode.Sticky
        else "AutoSplit",
        "allowOutOfOrderDelivery": policy.allow_out_of_order_delivery,
    }
    if policy.key_shared_mode == KeySharedMode.Sticky:
        body["stickyRanges"] = [list(r) for r in policy.sticky_ranges]
    return body
