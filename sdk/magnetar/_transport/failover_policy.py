"""When ``AutoClusterFailover`` switches deployments: a pure state machine, driven one check
at a time with a health probe passed in (no I/O, no clock, no thread here).

On the primary, each check probes it: after ``failover_threshold`` failed checks in a row the
client moves to the first secondary (in the given order) that answers its probe then; when
none does, it stays and tries again at the next check. On a secondary, each check probes the
primary first: after ``switch_back_threshold`` successes in a row the client goes back to
it; otherwise the current secondary is probed, and after ``failover_threshold`` failures in a
row the client moves to the first other secondary that answers. Every switch starts both
counts again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["FailoverPolicy"]

T = TypeVar("T")


class FailoverPolicy(Generic[T]):
    """Which of ``primary`` and ``secondary`` (ordered fallbacks) the client should use.

    Raises ValueError: no secondary, or a threshold below 1.
    """

    def __init__(self, primary: T, secondary: Sequence[T], failover_threshold: int,
                 switch_back_threshold: int) -> None:  # fmt: skip
        if not secondary:
            raise ValueError("AutoClusterFailover needs at least one secondary ServiceInfo")
        for name, value in (("failover_threshold", failover_threshold),
                            ("switch_back_threshold", switch_back_threshold)):  # fmt: skip
            if value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        self.primary = primary
        self.secondary = list(secondary)
        self._failover_threshold = failover_threshold
        self._switch_back_threshold = switch_back_threshold
        self.current = primary
        self.failures = 0  # failed checks in a row of the current deployment
        self.primary_successes = 0  # successful checks in a row of the primary, on a secondary

    @property
    def on_primary(self) -> bool:
        """Whether the client uses the primary now."""
        return self.current is self.primary

    def check(self, healthy: Callable[[T], bool]) -> T | None:
        """One check, probing with ``healthy(service)``; returns the deployment to switch to
        (now ``current``), or None to stay."""
        if not self.on_primary:
            if healthy(self.primary):
                self.primary_successes += 1
                if self.primary_successes >= self._switch_back_threshold:
                    return self._switch(self.primary)
            else:
                self.primary_successes = 0
        if healthy(self.current):
            self.failures = 0
            return None
        self.failures += 1
        if self.failures < self._failover_threshold:
            return None
        for candidate in self.secondary:
            if candidate is not self.current and healthy(candidate):
                return self._switch(candidate)
        return None

    def _switch(self, target: T) -> T:
        self.current = target
        self.failures = 0
        self.primary_successes = 0
        return target
