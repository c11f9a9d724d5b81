"""How a consumer lives through a service that fails, restarts or forgets it, as
pulsar-client reconnects and re-subscribes by itself:

- ``resubscribe``: the service forgot the consumer (ConsumerNotFound: restarted, or the lease
  ran out), its subscription (SubscriptionNotFound) or its topic (TopicNotFound: deleted,
  or a restart without its state; ``registration_lost``): register again with the original
  subscribe body — same name, type, policies and initial position (the service keeps an
  existing cursor and its acks; a missing subscription is created at the initial position,
  and a missing topic with it, as Pulsar's client reconnecting and its broker do). The
  sub-consumer's receiver queue is dropped, as Pulsar's client clears it on reconnect: the
  service sends those messages again, and ids this consumer acknowledged are never handed
  out twice (``AckTracker.skip_if_acked``; ids carry the ledger, which a topic created
  again or a restarted service never reuses, so no new message is taken for an old one). A
  reader (non-durable cursor) starts again after the last message it handed out: in a topic
  created again (a later ledger) that is its first message, as Pulsar's reader does. A
  reader whose old registration still holds its cursor (ConsumerBusy: the service had not
  dropped it yet) does not fight it: it takes a new cursor name and starts there instead.
- ``follow_switch``: the client moved to another deployment (cluster failover,
  ``magnetar._transport.failover``): register there as above before the next receive; a reader starts
  again at its original start position (the ids it handed out name the other deployment's
  messages).
- ``Streak``: the failures of one sub-consumer's receive loop, logged in the user's terms:
  one WARNING when receiving starts failing, DEBUG while it keeps failing (with the raw
  error), one INFO when it works again.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from magnetar import exceptions as exc
from magnetar._transport.failures import JitteredBackoff, describe

if TYPE_CHECKING:
    from .core import Core
    from .sub import Sub

__all__ = ["Streak", "follow_switch", "registration_lost", "resubscribe"]

RECEIVE_RETRY = JitteredBackoff(base=0.1, cap=5.0)  # waits between failed receives


def follow_switch(core: Core, sub: Sub) -> bool:
    """When the client switched deployments since ``sub`` registered (``Transport.switch``):
    subscribe again there with the original body, and forget the acknowledged ids (they
    name the other deployment's messages). True when ``sub`` is registered on the current
    deployment now (or was already)."""
    if sub.generation == core.t.generation:
        return True
    if core.acks is not None:
        core.acks.clear_acked()
    sub.last_taken = None  # a reader starts at its start position there
    error = exc.ConsumerNotFound("the client switched to another deployment")
    if not resubscribe(core, sub, sub.consumer_id, error, "the client switched deployments"):
        return False
    sub.lost_receive = False  # a new registration holds nothing
    return True


def resubscribe(
    core: Core,
    sub: Sub,
    failed_id: str,
    error: Exception,
    why: str = "the service had forgotten it",
) -> bool:
    """Register ``sub`` again after a request as consumer ``failed_id`` failed with
    ``error`` (the service forgot it). True when ``sub`` has a live registration now (made
    here, or by another thread since); False when it must not (unsubscribing, removed, or a
    closing consumer whose subscription is gone: it is not created again just to close) or
    the subscribe failed (logged; the caller retries later)."""
    with sub.lock:
        if sub.consumer_id != failed_id:
            return True  # another thread subscribed again meanwhile
        closing = core.stopping and isinstance(error, (exc.SubscriptionNotFound, exc.TopicNotFound))
        if core.unsubscribing or sub.stopped or closing:
            return False
        body = dict(core.body)
        if body.get("durable") is False and sub.last_taken is not None:
            body["startMessageId"] = str(sub.last_taken)  # a reader goes on where it was
            body["startMessageIdInclusive"] = False
        try:
            try:
                core.subscribe(sub, body)
            except exc.ConsumerBusy:
                if body.get("durable") is not False:
                    raise
                renew_reader_cursor(sub)  # its orphaned registration lapses by itself
                core.subscribe(sub, body)
        except exc.PulsarException as e:
            core.log.warning("consumer on %s: subscribing again failed: %s", sub.topic,
                             describe(e))  # fmt: skip
            core.log.debug("subscribing again on %s failed: %r", sub.topic, e)
            return False
    core.drop_queued(sub)
    core.log.info("consumer on %s subscribed again as %s (%s)", sub.topic, sub.consumer_id,
                  why)  # fmt: skip
    return True


def registration_lost(core: Core, sub: Sub, error: BaseException) -> bool:
    """Whether ``error`` says the service forgot the consumer, its subscription or its
    topic: subscribe again (``resubscribe``, which creates a missing topic). Not for a
    missing partition (subscribing would create a topic of that name, not the partitioned
    one: it waits until its topic is created again). A regex subscription does so only
    while the namespace still lists the topic: its discovery drops deleted topics
    (``multitopic``), which must not come back for it."""
    if isinstance(error, exc.ConsumerNotFound):
        return True
    if isinstance(error, exc.TopicNotFound) and sub.partition >= 0:
        return False
    if not isinstance(error, (exc.SubscriptionNotFound, exc.TopicNotFound)):
        return False
    return core.watcher is None or core.watcher.listed(sub.topic)


def renew_reader_cursor(sub: Sub) -> None:
    """Give a reader's sub-consumer a new cursor name (``reader-<random>``, as readers are
    named): the old name's cursor is held by an orphaned registration of its own."""
    name = f"reader-{uuid.uuid4().hex[:12]}"
    prefix = sub.base.rsplit("/subscriptions/", 1)[0]
    sub.base, sub.subscription = f"{prefix}/subscriptions/{name}/consumers", name


class Streak:
    """Failures in a row of one sub-consumer's receive loop."""

    def __init__(self, log: logging.Logger, topic: str) -> None:
        self._log = log
        self._topic = topic
        self.count = 0

    def failed(self, error: BaseException) -> float:
        """Record a failure; returns how long to wait before the next receive."""
        if self.count == 0:
            self._log.warning("receiving on %s failed: %s; retrying until it works",
                              self._topic, describe(error))  # fmt: skip
        self._log.debug("receive on %s failed (%d in a row): %r", self._topic, self.count + 1,
                        error)  # fmt: skip
        self.count += 1
        return RECEIVE_RETRY.delay(self.count - 1)

    def succeeded(self) -> None:
        """Record a success (logs the recovery after failures)."""
        if self.count:
            self._log.info("receiving on %s works again after %d failed attempt(s)",
                           self._topic, self.count)  # fmt: skip
        self.count = 0
