"""The receive loop of one sub-consumer: ONE long-poll receive in flight at a time, on the
sub-consumer's own daemon thread, filling the consumer's shared receiver queue.

Each sub-consumer may fill its share of the queue (``queue_size`` / sub-consumers); while
its share is full it sends a heartbeat every ``HEARTBEAT_SECONDS`` instead. A failing
receive is retried with a jittered backoff (``Streak``); when the service forgot the
consumer, its subscription or its topic, the sub-consumer subscribes again
(``recovery``). A receive that failed after it may have been served (a timeout, a 5xx: the
Lambda may have leased entries to this consumer and died before answering, or its answer
was lost) leaves those entries leased to a consumer that never got them: before its next
receive the sub-consumer asks the service to redeliver everything in flight to it and drops
its queued messages (as Pulsar's client does when its connection breaks), so nothing stays
stuck while the consumer lives. Its redelivery and heartbeat requests go on the poll's
connection, which the consumer's close aborts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from magnetar import exceptions as exc
from magnetar._transport.failures import describe, retryable
from magnetar._transport.long_poll import LongPoll
from magnetar._transport.notify import IDLE_POLLS
from magnetar.message import Message, MessageId

from .entries import decode_response
from .recovery import Streak, follow_switch, registration_lost, resubscribe

if TYPE_CHECKING:
    from .core import Core
    from .sub import Sub

__all__ = ["HEARTBEAT_SECONDS", "MAX_RECEIVE_MESSAGES", "RECEIVE_WAIT_MS", "poll_loop"]

RECEIVE_WAIT_MS = 5000  # long-poll wait of one receive request
# A consumer whose receiver queue stays full sends a heartbeat this often: the service
# disconnects consumers silent for CONSUMER_LEASE_MS (60 s by default).
HEARTBEAT_SECONDS = 20.0
# the most one receive request may ask for (docs/http-api/consuming.md, "Receive")
MAX_RECEIVE_MESSAGES = 10_000


def share(core: Core) -> int:
    """How many messages of the receiver queue one sub-consumer may fill."""
    return max(1, core.queue_size // max(len(core.subs), 1))


def poll_loop(core: Core, sub: Sub, poll: LongPoll) -> None:
    """Receive for ``sub`` until the consumer stops or ``sub`` is stopped (its thread)."""
    streak = Streak(core.log, sub.topic)
    while True:
        with core.cond:
            while not core.stopping and not sub.stopped and sub.queued >= share(core):
                if not core.cond.wait(HEARTBEAT_SECONDS):
                    break  # the queue stayed full: keep the consumer's lease alive
            if core.stopping or sub.stopped:
                return
            want = min(share(core) - sub.queued, MAX_RECEIVE_MESSAGES)
            if want > 0:
                sub.queued += want  # reserve the space
        if not follow_switch(core, sub):  # the client switched deployments: subscribe there
            with core.cond:
                sub.queued -= max(want, 0)
            if paused(core, poll, streak.failed(exc.ConnectError("subscribing failed"))):
                return
            continue
        if want <= 0:
            heartbeat(core, sub)
            continue
        if sub.lost_receive and not redeliver_lost(core, sub, poll, streak):
            with core.cond:
                sub.queued -= want
            continue
        wait_ms = 0 if sub.idle.watched else sub.chunks.wait_ms(RECEIVE_WAIT_MS)
        body = {"maxMessages": want, "waitMs": wait_ms, "format": "entry"}
        messages: list[Message] = []
        consumer_id, pause = sub.consumer_id, 0.0
        try:
            resp = poll.post(f"{sub.base}/{consumer_id}/receive", body,
                             RECEIVE_WAIT_MS / 1000 + core.t.operation_timeout)  # fmt: skip
            messages = decode_response(core, sub, resp)
            sub.connected = True
            streak.succeeded()
        except exc.AlreadyClosed:
            return
        except exc.PulsarException as e:
            if sub.stopped:
                return
            sub.connected = False
            pause = streak.failed(e)
            if registration_lost(core, sub, e):
                if resubscribe(core, sub, consumer_id, e):
                    pause = 0.0
            elif retryable(e):
                sub.lost_receive = True
        finally:
            with core.cond:
                sub.queued -= want
        if pause and paused(core, poll, pause):
            return
        idle_after(core, sub, len(messages), failed=not sub.connected)
        for msg in messages:  # held before the application can settle them
            core.ack_tracker.received(sub, msg.message_id())
        with core.cond:
            if sub.stopped:
                return
            for msg in messages:
                core.queue.append((sub, msg))
            sub.queued += len(messages)
            core.wake()


def paused(core: Core, poll: LongPoll, seconds: float) -> bool:
    """Wait ``seconds`` after a failure, less when the client switches deployments (the
    new one is tried at once) or the consumer closes; True when it closed."""
    poll.pause(seconds)
    return core.closed_event.is_set()


def idle_after(core: Core, sub: Sub, received: int, failed: bool) -> None:
    """After a receive: count empty ones; past ``IDLE_POLLS`` watch the partition on the
    channel (the next receive then checks without waiting); after an empty check, sleep on
    the channel until a notice, a recheck or a keepalive (``magnetar._transport.notify``)."""
    idle, channel = sub.idle, core.channel
    if received or failed or channel is None:
        idle.empty, idle.watched = (0 if received else idle.empty), False
        return
    if idle.watched:  # the check after the watch found nothing: sleep
        idle.watched = False
        if channel.sleep(sub.topic, idle, core.closed_event):
            idle.empty = 0  # woken by a notice: long-poll again
            return
    else:
        idle.empty += 1
    if idle.empty >= IDLE_POLLS and not core.stopping and not sub.stopped:
        idle.watched = channel.watch(sub.topic, sub.subscription, sub.consumer_id, idle)


def redeliver_lost(core: Core, sub: Sub, poll: LongPoll, streak: Streak) -> bool:
    """After a receive that may have been served unseen: have the service redeliver what is
    in flight to ``sub``, then drop its queued messages (they come again). False when the
    request failed (after the streak's pause: the loop tries again)."""
    consumer_id = sub.consumer_id
    try:
        post_abortable(core, sub, "redeliver")
    except exc.AlreadyClosed:
        return False
    except exc.PulsarException as e:
        if registration_lost(core, sub, e) and resubscribe(core, sub, consumer_id, e):
            sub.lost_receive = False  # a new registration holds nothing
            return True
        paused(core, poll, streak.failed(e))
        return False
    sub.lost_receive = False
    core.drop_queued(sub)
    return True


def heartbeat(core: Core, sub: Sub) -> None:
    """Tell the service the consumer lives while it is not receiving (full queue)."""
    consumer_id = sub.consumer_id
    try:
        post_abortable(core, sub, "heartbeat")
    except exc.AlreadyClosed:
        return
    except exc.PulsarException as e:
        core.log.warning("heartbeat on %s failed: %s", sub.topic, describe(e))
        if registration_lost(core, sub, e):
            resubscribe(core, sub, consumer_id, e)


def post_abortable(core: Core, sub: Sub, action: str) -> None:
    """POST ``{}`` to the sub-consumer's ``action`` on its poll's connection: the close
    aborts it at once (``AlreadyClosed``) instead of waiting for the service's answer."""
    poll = sub.poll
    if poll is None:
        core.post(sub, action, {})
    else:
        poll.post(f"{sub.base}/{sub.consumer_id}/{action}", {}, core.t.operation_timeout)


def chunks_dropped(core: Core, sub: Sub, ids: list[MessageId], ack: bool) -> None:
    """An incomplete chunked message was dropped: its chunks are acknowledged (``ack``) or
    left for the ack timeout to bring back."""
    core.log.warning("dropping an incomplete chunked message on %s (%d chunks, %s)",
                     sub.topic, len(ids), "acknowledged" if ack else "left unacknowledged")  # fmt: skip
    for msg_id in ids:
        if ack:
            core.ack_tracker.ack(sub, msg_id)
        else:
            core.ack_tracker.delivered(sub, msg_id)  # the ack timeout, when set, brings it back
