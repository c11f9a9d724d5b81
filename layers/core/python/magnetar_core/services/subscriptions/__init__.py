"""Subscriptions: consumers, the long-poll receive (dispatcher), acks, nacks, redelivery.

Every operation is one optimistic read-modify-write of the cursor item: read it strongly
consistent, apply a pure change (``cursor.CursorState``), write it conditional on the
version, and on a lost race retry with jitter. A receive commits the lease before it reads
entry objects, so a crash in between only delays those messages (at-least-once).
"""

from __future__ import annotations

from magnetar_core.services.subscriptions.acks import Acknowledgements
from magnetar_core.services.subscriptions.base import ConsumerHandle, DeliveredEntry, DispatchLimits
from magnetar_core.services.subscriptions.dispatch import Dispatch
from magnetar_core.services.subscriptions.lifecycle import ConsumerLifecycle

__all__ = ["ConsumerHandle", "DeliveredEntry", "DispatchLimits", "Subscriptions"]


class Subscriptions(ConsumerLifecycle, Dispatch, Acknowledgements):
    """The server side of consumers: lifecycle, dispatch and acknowledgements."""
