"""The dispatcher: long-poll receive, leasing entries per subscription type, fetching them.

Delays: every dispatch first consumes the timer releases of the cursor (``cursor_delays``);
on Shared and Key_Shared subscriptions an entry whose ``deliverAt`` is still to come goes to
the delayed set under its due bucket instead of being leased, and the first time a bucket
appears its timer workflow is started (before the cursor write). A long-poll wakes up when
the earliest bucket is due, to pick up its release.

Dead letters: the same cursor write moves entries past the subscription's dead letter
policy to its outbox; the outbox is then published and settled (``dead_lettering``).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from magnetar_core.domain.cursor.dispatched import count_out
from magnetar_core.domain.cursor.grants import (
    Grant,
    carried_over,
    fold,
    grants_apply,
    reclaim,
)
from magnetar_core.domain.cursor.records import Delivery as Granted
from magnetar_core.domain.cursor.rounds import slot_to_take
from magnetar_core.domain.cursor.state import KEY_SHARED, CursorState, Delivery
from magnetar_core.domain.dispatchers import POLICIES
from magnetar_core.domain.errors import (
    InvalidMessage,
    ServiceUnitNotReady,
)
from magnetar_core.domain.log import IndexEntry
from magnetar_core.domain.rangeset import RangeSet
from magnetar_core.ports import CommitSignal
from magnetar_core.services import optimistic
from magnetar_core.services.entries import DeliveredEntry
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.nonpersistent import NonPersistent
from magnetar_core.services.subscriptions.base import SubscriptionContext
from magnetar_core.services.subscriptions.compacted_reads import CompactedReads, Plan
from magnetar_core.services.subscriptions.dead_lettering import DeadLettering
from magnetar_core.services.subscriptions.fetching import Fetcher
from magnetar_core.services.subscriptions.grants import Grants
from magnetar_core.services.subscriptions.planning import Planner
from magnetar_core.services.subscriptions.rounds import Rounds
from magnetar_core.services.subscriptions.waiting import HeadWait
from magnetar_core.services.timers import DelayTimers
from magnetar_core.services.topics import PartitionRef
from magnetar_wire.names import TopicName


class _Planned(NamedTuple):
    """One dispatch attempt's plan: the cursor as changed, what it leases, whether the
    change must be written, the earliest pending delay bucket, whether delays moved."""

    state: CursorState
    deliveries: list[Delivery]
    known: dict[int, IndexEntry]
    write: bool
    wake_at: int | None
    moved: bool
    carried: tuple[Granted, ...] = ()
    take: bool = False  # take the consumer's dealt slot (``rounds``) instead: no write


class Dispatch:
    """Receive: redeliveries first, then new entries, for consumers the policy admits.

    ``timers`` bucket and start delays, ``namespaces`` say whether delayed delivery is on,
    ``dead_letters`` drains outboxes, ``non_persistent`` serves non-persistent topics,
    ``compacted`` serves ``readCompacted`` cursors, ``fetcher`` reads the leased entries,
    ``signal`` wakes long-polls on commits (None: they poll; ``waiting.HeadWait``).
    """

    def __init__(
        self,
        context: SubscriptionContext,
        timers: DelayTimers,
        namespaces: Namespaces,
        dead_letters: DeadLettering,
        non_persistent: NonPersistent,
        compacted: CompactedReads,
        fetcher: Fetcher,
        signal: CommitSignal | None = None,
    ) -> None:
        self._ctx = context
        self.waits = HeadWait(context, signal)
        self._timers = timers
        self._dead_letters = dead_letters
        self._non_persistent = non_persistent
        self._compacted = compacted
        self._fetcher = fetcher
        self.grants = Grants(context)
        self.rounds = Rounds(context)
        self._planner = Planner(context, timers, namespaces, fetcher.budget)

    def receive(
        self,
        topic: TopicName,
        subscription: str,
        consumer_id: str,
        max_messages: int,
        wait_ms: int,
        by_reference: bool = False,
        role: str | None = None,
    ) -> list[DeliveredEntry]:
        """Dispatch up to ``max_messages`` messages, long-polling up to ``wait_ms``.

        Redeliveries come first, then new entries in order. Returns [] when nothing came.
        With ``by_reference``, entries above the inline limits come as presigned URLs (the
        response must fit Lambda's 6 MB). Raises ConsumerNotFound, InvalidMessage,
        AuthorizationError (``role`` is not the consumer's: nothing is leased).
        """
        if not 1 <= max_messages <= 10_000:
            raise InvalidMessage(f"maxMessages must be between 1 and 10000, not {max_messages}")
        ctx = self._ctx
        if not 0 <= wait_ms <= ctx.limits.max_wait_ms:
            raise InvalidMessage(
                f"waitMs must be between 0 and {ctx.limits.max_wait_ms}, not {wait_ms}"
            )
        ref = ctx.topics.resolve(topic, create=False, allow_non_persistent=True)
        if not topic.persistent:
            self._keep_alive(ref, subscription, consumer_id, role)
            return self._non_persistent.receive(ref, subscription, max_messages, wait_ms)
        if self.grants.serves(ref, subscription, max_messages):
            granted = self.grants.hand_out(ref, subscription, consumer_id, role, max_messages)
            if granted:  # served from the consumer's grant: no cursor read or write
                self.waits.active(ref.key)
                return self._fetcher.fetch(ref, granted, by_reference)
        deadline = ctx.runtime.monotonic_ms() + wait_ms
        while True:
            seen = self.waits.version(ref.key)  # before the dispatch's read: no lost wake
            deliveries, read_position, wake_at, progressed = self._dispatch(
                ref, subscription, consumer_id, max_messages, role, by_reference
            )
            if deliveries:
                self.waits.active(ref.key)
                return self._fetcher.fetch(ref, deliveries, by_reference)
            if progressed and ctx.runtime.monotonic_ms() < deadline:
                continue  # entries went to the delayed set or came out of it: look again
            if not self.waits.until_more(ref.key, read_position, deadline, seen, wake_at):
                return []

    def _keep_alive(
        self, ref: PartitionRef, subscription: str, consumer_id: str, role: str | None
    ) -> None:
        """Check the consumer and renew its lease (non-persistent receives skip the cursor's
        dispatch, not its liveness). Raises ConsumerNotFound, SubscriptionNotFound."""
        ctx = self._ctx
        lease_ms = ctx.limits.consumer_lease_ms

        def change(state: CursorState) -> tuple[None, bool]:
            now = ctx.runtime.now_ms()
            expired = state.expire_consumers(now, lease_ms)
            ctx.require_consumer(state, consumer_id, role)
            return None, bool(expired) | state.touch(consumer_id, now, lease_ms // 3)

        ctx.update(ref, subscription, change)

    def _dispatch(
        self,
        ref: PartitionRef,
        subscription: str,
        consumer_id: str,
        max_messages: int,
        role: str | None = None,
        by_reference: bool = False,
        taking: bool = True,
    ) -> tuple[list[tuple[Delivery, IndexEntry]], int, int | None, bool]:
        """One optimistic dispatch: ``(deliveries with their index items, read position,
        earliest pending bucket or None, whether delays moved anything)``; no more than one
        response holds (``by_reference``: as the Fetcher will send them). Taking a grant,
        a dealt slot is taken first when nothing else must be written (``taking``)."""
        ctx = self._ctx
        lease_ms = ctx.limits.consumer_lease_ms
        timer_id = ctx.runtime.new_id()[:12]
        grants, clock = self.grants, [0]
        revoked: dict[str, Grant] = {}  # lapsed consumers' grants, taken back before expiry
        grant_of: dict[str, Grant | None] = {}  # this consumer's grant item (taking a grant)
        voided: dict[tuple[str, int], RangeSet] = {}  # slots taken back (``Rounds.steal``)

        granting = grants.serves(ref, subscription, max_messages)
        # the item and head before the cursor (its race is between read and write); on a
        # subscription dealing in rounds, the head and the others' items after it, unless
        # a dealt slot is all this receive needs
        early = ctx.cursors.grant(ref.key, subscription, consumer_id) if granting else None
        dealing = granting and bool(ctx.granted.consumers(ref.key, subscription))
        heads = [ctx.log.head(ref.key)] if granting and not dealing else []
        others: dict[str, Grant | None] = {}

        def read() -> CursorState:
            state = ctx.cursors.get(ref.key, subscription)
            if state is None:
                raise ctx.missing(ref, subscription)
            ctx.granted.learn(ref.key, state)
            clock[0] = now = ctx.runtime.now_ms()
            # again at every attempt: a retry may read a grant recorded since (``Revoked``)
            revoked.update(grants.revoke(ref, state, state.roster.lapsed(now, lease_ms)))
            grant_of.clear()
            waiting = bool(state.redeliver)  # then a dealt slot joins them, taken back
            slot_first = taking and not waiting and slot_to_take(state, consumer_id, early)
            if granting and not others and not slot_first:
                heads[:] = heads or [ctx.log.head(ref.key)]
                others.update(self.rounds.others(ref, subscription, consumer_id))
            if granting and grants_apply(state) and consumer_id in state.consumers:
                grant_of[consumer_id] = early
                head = heads[0] if heads else None
                if waiting and consumer_id in state.dealt:
                    self.rounds.own_slot(ref, state, consumer_id, voided)
                self.rounds.steal(ref, state, consumer_id, (early, others), head, voided)
            elif consumer_id in state.dealt:  # dealt to, but receiving many at a time
                self.rounds.own_slot(ref, state, consumer_id, voided)
            return state

        def plan_of(state: CursorState) -> tuple[_Planned, CursorState | None]:
            now, head = clock[0], (heads[0] if heads else None)
            for lapsed in state.roster.lapsed(now, lease_ms):
                reclaim(state, lapsed, revoked.get(lapsed), ctx.hashes_of(ref))
            expired = state.expire_consumers(now, lease_ms)
            ctx.require_consumer(state, consumer_id, role)
            dirty = bool(expired) | state.touch(consumer_id, now, lease_ms // 3)
            slot = taking and not dirty and not voided and consumer_id in grant_of
            if slot and slot_to_take(state, consumer_id, grant_of[consumer_id]):
                return _Planned(state, [], {}, False, None, False, take=True), None
            dirty |= self.rounds.return_voided(state, voided)
            asked, carried = max_messages, tuple[Granted, ...]()
            if consumer_id in grant_of:  # taking a grant: its acks first, then a new lease
                previous = grant_of[consumer_id]
                dirty |= fold(state, consumer_id, previous, ctx.hashes_of(ref)) > 0
                carried = tuple(carried_over(state, consumer_id, previous))
                dirty |= bool(carried)  # written: a pending revoker's write must lose its race
                asked = grants.policy.entries - len(carried)
            deliveries: list[Delivery] = []
            known: dict[int, IndexEntry] = {}
            before = state.read_position
            delays_before = (set(state.delayed), state.delayed_count(), set(state.released))
            state.consume_releases(now, self._timers.options.release_grace_ms)
            dead = state.collect_dead_letters(ref.topic, timer_id)
            policy = POLICIES[state.sub_type]
            if asked > 0 and policy.admits(state, consumer_id, ref.partition, str(ref.topic)):
                dirty |= policy.take_over(state, consumer_id) > 0
                planner = self._planner
                live = planner.plan_key_shared if state.sub_type == KEY_SHARED else planner.plan
                plan: Plan = partial(live, by_reference=by_reference)
                wants: dict[str, int] = {}
                if consumer_id in grant_of and state.sub_type != KEY_SHARED:
                    wants, folded = self.rounds.wants(state, consumer_id, others, head)
                    dirty |= folded
                    plan = partial(planner.plan, by_reference=by_reference,
                                   grant=(head, max_messages), dealing=sum(wants.values()))  # fmt: skip
                if state.read_compacted:
                    plan = self._compacted.planner(plan)  # the compacted view first
                deliveries, known = plan(ref, state, consumer_id, asked, now)
                count_out(state, deliveries, known, now)
                if wants:  # a dispatch round: the same page dealt to consumers with permits
                    due = planner.due(ref, state, known.values(), now)
                    dealt = self.rounds.deal(state, wants, known, due)
                    count_out(state, dealt, known, now)
                    dirty |= bool(dealt)
            delays_after = (set(state.delayed), state.delayed_count(), set(state.released))
            moved = delays_after != delays_before or dead > 0
            dirty |= moved or (state.read_position != before and state.sub_type == KEY_SHARED)
            pending = set(state.delayed) | state.released
            wake_at = min(pending) if pending else None
            write = bool(deliveries) or dirty
            if write:
                self._timers.start_new(ref.key, state, delays_before[0], timer_id)
            planned = _Planned(state, deliveries, known, write, wake_at, moved, carried)
            return planned, (state if write else None)

        planned = optimistic.update(
            read, plan_of, ctx.put(ref), ctx.runtime, ctx.limits.max_attempts
        )
        if isinstance(planned, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Subscription {subscription} is too busy to dispatch; retry")
        state = planned.state
        if planned.take:  # the slot a round dealt to this consumer, if its item allows
            own = grant_of.get(consumer_id)
            if (taken := self.rounds.take(ref, state, consumer_id, own, max_messages)) is not None:
                return taken, state.read_position, None, False
            return self._dispatch(
                ref, subscription, consumer_id, max_messages, role, by_reference, taking=False
            )
        if consumer_id in grant_of and (planned.carried or planned.deliveries):
            given = (planned.carried, tuple(planned.deliveries))
            pairs = self.grants.record(ref, state, consumer_id, grant_of[consumer_id], given,
                                       planned.known, max_messages)  # fmt: skip
            self._dead_letters.drain(ref, state)
            return pairs, state.read_position, planned.wake_at, planned.moved
        if not planned.write:
            settled = self._dead_letters.drain(ref, state)  # left by a crash, if any
            return [], state.read_position, planned.wake_at, settled > 0
        pairs = [(d, planned.known[d.entry_id]) for d in planned.deliveries]
        read_position = state.read_position
        self._dead_letters.drain(ref, state)
        return pairs, read_position, planned.wake_at, planned.moved
