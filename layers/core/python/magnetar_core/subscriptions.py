"""Subscriptions: consumers, the long-poll receive (dispatcher), acks, nacks, redelivery.

Every operation is one optimistic read-modify-write of the cursor item: read it strongly
consistent, apply a pure change (``cursor.CursorState``), write it conditional on the
version, and on a lost race retry with jitter. A receive commits the lease before it reads
entry objects, so a crash in between only delays those messages (at-least-once).
"""

from __future__ import annotations

from .acks import Acknowledgements
from .consumer_lifecycle import ConsumerLifecycle
from .dispatch import Dispatch
from .subscription_base import ConsumerHandle, DeliveredEntry, DispatchLimits

__all__ = ["ConsumerHandle", "DeliveredEntry", "DispatchLimits", "Subscriptions"]


class Subscriptions(ConsumerLifecycle, Dispatch, Acknowledgements):
    """The server side of consumers: lifecycle, dispatch and acknowledgements."""
