"""Producer registration and access modes (Shared, Exclusive, ExclusiveWithFencing,
WaitForExclusive), as small policy objects over one lease item per partition.

Taking a partition exclusively bumps its access epoch in the lease, then commits an epoch
marker to the log; from then on only producers holding the new epoch can commit (see
produce.py). Exclusive holders renew their lease with heartbeats; a lease not renewed for
``lease_ms`` lapses, and the next registration fences the dead holder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core.domain.errors import (
    ConditionFailed,
    InvalidMessage,
    ProducerBusy,
    ProducerFenced,
    ServiceUnitNotReady,
)
from magnetar_core.domain.producers import ProducerLease
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security.policy import AuthorizationError
from magnetar_core.ports import ProducerStateStore
from magnetar_core.services import optimistic
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.produce import Producer
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.names import TopicName

ACCESS_MODES = ("Shared", "Exclusive", "ExclusiveWithFencing", "WaitForExclusive")
WAIT_POLL_MS = 200


@dataclass(frozen=True)
class Registration:
    """What a producer learns when it registers."""

    topic: TopicName
    producer_name: str
    epoch: int
    last_sequence_id: int
    max_message_size_bytes: int
    deduplication: bool
    lease_ms: int


class ProducerAccess:
    """Registers producers, renews and releases exclusive leases."""

    def __init__(
        self,
        topics: Topics,
        producer: Producer,
        store: ProducerStateStore,
        namespaces: Namespaces,
        dedup: Deduplicator,
        runtime: Runtime,
        lease_ms: int,
        max_wait_ms: int,
        max_attempts: int = 16,
    ) -> None:
        self._topics = topics
        self._producer = producer
        self._store = store
        self._namespaces = namespaces
        self._dedup = dedup
        self._rt = runtime
        self._lease_ms = lease_ms
        self._max_wait_ms = max_wait_ms
        self._max_attempts = max_attempts

    def register(
        self,
        topic: TopicName,
        name: str | None,
        mode: str,
        wait_ms: int = 0,
        role: str | None = None,
    ) -> Registration:
        """Register a producer in ``mode``; an exclusive one is bound to ``role`` (None:
        authentication off): only that role may renew or release it, and the same name
        registered by another role counts as another producer.

        Raises InvalidMessage (mode, wait), ProducerFenced (held exclusively by another),
        ProducerBusy (WaitForExclusive timed out), TopicNotFound, NotAllowedError,
        TopicTerminated (known terminated by this container; otherwise the first send is).
        """
        if mode not in ACCESS_MODES:
            raise InvalidMessage(
                f"accessMode must be one of {', '.join(ACCESS_MODES)}, not {mode!r}"
            )
        if not 0 <= wait_ms <= self._max_wait_ms:
            raise InvalidMessage(f"waitMs must be between 0 and {self._max_wait_ms}")
        ref = self._topics.resolve(topic, create=True, allow_non_persistent=True)
        policies = self._namespaces.effective(topic, fresh=True)  # reads the topic item
        self._topics.check_open(ref)  # ... so this knows whether it was terminated
        name = name or f"magnetar-{self._rt.new_id()[:10]}"
        if mode == "Shared":
            epoch = self._join_shared(ref)
        elif mode == "WaitForExclusive":
            epoch = self._wait_and_take(ref, name, wait_ms, role)
        else:
            fence = mode == "ExclusiveWithFencing"
            epoch = self._take(ref, name, mode, fence_holder=fence, role=role)
        last = self._dedup.last_sequence_id(ref.key, name) if policies.deduplication else -1
        return Registration(
            topic,
            name,
            epoch,
            last,
            policies.max_message_size_bytes,
            policies.deduplication,
            self._lease_ms,
        )

    def _join_shared(self, ref: PartitionRef) -> int:
        def change(lease: ProducerLease) -> tuple[int, ProducerLease | None]:
            if lease.held(self._rt.now_ms(), self._lease_ms):
                raise ProducerFenced(
                    f"Topic {ref.topic} is held by exclusive producer {lease.holder}"
                )
            if lease.holder is None:
                return lease.epoch, None
            # a lapsed exclusive holder: fence it and reopen the partition to everyone
            reopened = self._next_epoch(lease, None, None)
            return reopened.epoch, reopened

        return self._update_lease(ref, change, self._open_epoch)

    def _take(
        self, ref: PartitionRef, name: str, mode: str, fence_holder: bool, role: str | None
    ) -> int:
        def change(lease: ProducerLease) -> tuple[int, ProducerLease]:
            held = lease.held(self._rt.now_ms(), self._lease_ms)
            other = lease.holder != name or lease.role != role
            if held and other and not fence_holder:
                raise ProducerFenced(
                    f"Topic {ref.topic} is held by exclusive producer {lease.holder}; "
                    "use ExclusiveWithFencing to take over or WaitForExclusive to wait"
                )
            taken = self._next_epoch(lease, name, mode, role)
            return taken.epoch, taken

        return self._update_lease(ref, change, self._open_epoch)

    def _update_lease(
        self,
        ref: PartitionRef,
        change: Callable[[ProducerLease], tuple[int, ProducerLease | None]],
        write: Callable[[PartitionRef, ProducerLease], None],
    ) -> int:
        """One optimistic update of the partition's lease: ``change`` returns the epoch to
        answer and the lease to ``write`` (None: none). Raises ServiceUnitNotReady when
        every attempt lost its race, and what ``change`` or ``write`` raise."""
        outcome = optimistic.update(
            lambda: self._store.lease(ref.key),
            change,
            lambda lease: write(ref, lease),
            self._rt,
            self._max_attempts,
        )
        if isinstance(outcome, optimistic.Conflict):
            raise ServiceUnitNotReady(f"Producer lease of {ref.topic} is contended; retry")
        return outcome

    def _wait_and_take(self, ref: PartitionRef, name: str, wait_ms: int, role: str | None) -> int:
        deadline = self._rt.monotonic_ms() + wait_ms
        while True:
            try:
                return self._take(ref, name, "WaitForExclusive", fence_holder=False, role=role)
            except ProducerFenced:
                left = deadline - self._rt.monotonic_ms()
                if left <= 0:
                    raise ProducerBusy(
                        f"Topic {ref.topic} is still held by an exclusive producer; keep waiting"
                    ) from None
                self._rt.sleep_ms(min(WAIT_POLL_MS, left))

    def _next_epoch(
        self, lease: ProducerLease, holder: str | None, mode: str | None, role: str | None = None
    ) -> ProducerLease:
        """The lease with the next access epoch, held by ``holder`` of ``role`` (None: open
        to all)."""
        now = self._rt.now_ms()
        return ProducerLease(lease.epoch + 1, holder, mode, now, lease.version, role)

    def _open_epoch(self, ref: PartitionRef, lease: ProducerLease) -> None:
        """Write the lease of a new epoch (conditional: raises ConditionFailed), then fence
        older epochs in the log (raises ProducerFenced when a newer one is there)."""
        self._store.put_lease(ref.key, lease)
        self._producer.append_marker(
            ref, lease.epoch, exclusive=lease.holder is not None, producer=lease.holder or ""
        )

    def heartbeat(self, topic: TopicName, name: str, epoch: int, role: str | None = None) -> int:
        """Renew an exclusive lease; raises ProducerFenced when it was lost,
        AuthorizationError when ``role`` is not the holder's."""
        ref = self._topics.resolve(topic, create=False, allow_non_persistent=True)

        def change(lease: ProducerLease) -> tuple[int, ProducerLease]:
            if lease.holder != name or lease.epoch != epoch:
                raise ProducerFenced(
                    f"Producer {name} no longer holds {topic} (epoch {lease.epoch})"
                )
            _owned_by(lease, role, topic)
            lease.seen_ms = self._rt.now_ms()
            return epoch, lease

        def renew(ref: PartitionRef, lease: ProducerLease) -> None:
            self._store.put_lease(ref.key, lease)

        return self._update_lease(ref, change, renew)

    def release(
        self, topic: TopicName, name: str, epoch: int | None, role: str | None = None
    ) -> bool:
        """Give up an exclusive lease (idempotent); True when one was released. Raises
        AuthorizationError when ``role`` is not the holder's (nothing changes)."""
        ref = self._topics.resolve(topic, create=False, allow_non_persistent=True)
        lease = self._store.lease(ref.key)
        if lease.holder != name or (epoch is not None and lease.epoch != epoch):
            return False
        _owned_by(lease, role, topic)
        try:
            self._open_epoch(ref, self._next_epoch(lease, None, None))
        except ConditionFailed:  # the lease changed since read: someone else moved it on
            return False
        except ProducerFenced:  # a taker's newer epoch got into the log before this marker:
            return True  # the lease was given up, and that epoch fences the old one too
        return True


def _owned_by(lease: ProducerLease, role: str | None, topic: TopicName) -> None:
    """Raise AuthorizationError (403) when ``role`` acts on an exclusive producer another
    role registered (a producer name is not a credential); None on either side passes."""
    if role is not None and lease.role is not None and lease.role != role:
        raise AuthorizationError(
            f"Role '{role}' may not act on producer {lease.holder} of {topic}: another role "
            "registered it, and only that role may renew or release it"
        )
