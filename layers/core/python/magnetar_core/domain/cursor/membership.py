"""Joins and departures of a subscription's consumers, pure.

A consumer joins when the subscription's type allows it (``ConsumerRoster.admit``); a
Key_Shared one also joins the selector (``KeySharedCursor.join``). A consumer that leaves —
closed, or silent past its lease — has every entry in flight to it sent back for
redelivery (count + 1). ``Membership`` works on the parts ``CursorState`` hands it for one
operation (through its ``Acknowledgements``) and keeps nothing of its own.
"""

from __future__ import annotations

from magnetar_core.domain.cursor.acknowledgements import Acknowledgements
from magnetar_core.domain.cursor.key_shared import KeySharedCursor
from magnetar_core.domain.cursor.key_shared_state import HashesOf, KeySharedOptions, KeySharedState
from magnetar_core.domain.cursor.records import KEY_SHARED, ConsumerInfo


class Membership:
    """The consumers of ``subscription``, over its cursor's acknowledgement rules."""

    def __init__(self, rules: Acknowledgements, subscription: str) -> None:
        self.rules, self.subscription = rules, subscription

    def join(
        self,
        info: ConsumerInfo,
        sub_type: str,
        current_type: str,
        options: KeySharedOptions | None,
        hashes_of: HashesOf | None,
    ) -> KeySharedState | None:
        """Register a consumer of ``sub_type`` on a ``current_type`` subscription; returns
        the subscription's Key_Shared state from now on (None unless ``sub_type`` is
        Key_Shared: the consumer joined the selector with ``options``, default AUTO_SPLIT,
        and ``hashes_of`` loads hashes of messages in flight, to block moved hashes).
        Raises ConsumerBusy on an Exclusive clash, a type clash or Key_Shared options that
        differ from the subscription's; ConsumerAssignError / HashRangeConflict (STICKY)."""
        r = self.rules
        r.roster.admit(sub_type, current_type, self.subscription)
        ks = None
        if sub_type == KEY_SHARED:
            parts = (r.acks, r.reads, r.roster, r.delays)
            ks = KeySharedCursor.join(r.key_shared, info, options or KeySharedOptions(),
                                      self.subscription, parts, hashes_of)  # fmt: skip
        r.roster.register(info)
        return ks

    def leave(self, consumer_id: str) -> int:
        """Unregister a consumer; its in-flight entries go back for redelivery (count + 1).
        Returns how many entries went back."""
        held = self.rules.holdings(consumer_id)  # before its masks go with it
        self.rules.roster.unregister(consumer_id)
        if self.rules.key_shared is not None:
            self.rules.key_shared.leave(consumer_id)
        return self.rules.redeliver_all(consumer_id, None, held)

    def expire(self, now_ms: int, lease_ms: int) -> list[str]:
        """Disconnect consumers not seen for ``lease_ms`` at ``now_ms``; their entries go back
        for redelivery. Returns the ids removed."""
        gone = self.rules.roster.lapsed(now_ms, lease_ms)
        for consumer_id in gone:
            self.leave(consumer_id)
        return gone
