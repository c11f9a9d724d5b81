"""What a failed request means to the SDK: retry it (and after how long), subscribe again
first, or give up — and how to say so in the user's terms.

The service's own error text can be internal ("checking entry 0 of ...|1 failed:
EndpointConnectionError"); logs at INFO and above use ``describe``, the raw text goes to
DEBUG only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from magnetar import exceptions as exc

__all__ = ["RETRYABLE", "JitteredBackoff", "describe", "retryable"]

# Errors after which the same request may succeed later: the service was busy, throttled,
# slow, unreachable or failed inside (5xx without a Pulsar error name).
RETRYABLE: tuple[type[exc.PulsarException], ...] = (
    exc.ServiceUnitNotReady,
    exc.TooManyRequests,
    exc.Timeout,
    exc.ConnectError,
    exc.UnknownError,
)

_TERMS: list[tuple[type[exc.PulsarException], str]] = [
    (exc.ConnectError, "the service cannot be reached"),
    (exc.Timeout, "the service did not answer in time"),
    (exc.TooManyRequests, "the service is throttling requests"),
    (exc.ServiceUnitNotReady, "the service is busy or its storage is unavailable"),
    (exc.ConsumerNotFound, "the service no longer knows this consumer (restarted, or the "
                           "consumer was silent longer than its lease)"),
    (exc.SubscriptionNotFound, "the subscription no longer exists on the service"),
    (exc.TopicNotFound, "the topic no longer exists on the service"),
    (exc.AuthenticationError, "the service refused the credentials"),
    (exc.AuthorizationError, "the credentials do not allow this"),
    (exc.UnknownError, "the service failed with an internal error"),
]  # fmt: skip


def retryable(error: BaseException) -> bool:
    """Whether the failed request may succeed if sent again later."""
    return isinstance(error, RETRYABLE)


def describe(error: BaseException) -> str:
    """``error`` in the user's terms, with its Pulsar name (no internal detail)."""
    name = type(error).__name__
    for cls, text in _TERMS:
        if isinstance(error, cls):
            return f"{text} ({name})"
    return f"the service refused the request ({name}: {error})"


@dataclass
class JitteredBackoff:
    """Jittered exponential backoff in seconds: attempt ``n`` waits a uniform time in
    ``[d / 2, d]`` where ``d = min(cap, base * 2**n)`` (so never more than ``cap``)."""

    base: float = 0.1
    cap: float = 5.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0 for the first retry)."""
        ceiling = min(self.cap, self.base * 2 ** min(attempt, 30))
        return self.rng.uniform(ceiling / 2, ceiling)
