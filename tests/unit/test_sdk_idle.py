"""The SDK's idle rule (``_polling.idle_after``, issue 16) on a fake channel: two empty
long-polls make a watch, the check after it makes a sleep, a notice resumes long-polls, a
keepalive watches again, a refused watch keeps long-polling, and messages or a failed
receive reset the count."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from magnetar._consumer.polling import idle_after
from magnetar._transport.notify import IDLE_POLLS, IdleState, channel_for


@dataclass
class FakeChannel:
    accept: bool = True
    notice: bool = True
    calls: list = field(default_factory=list)

    def watch(self, topic, subscription, consumer_id, idle):
        self.calls.append(("watch", topic, subscription, consumer_id))
        return self.accept

    def sleep(self, topic, idle, closed):
        self.calls.append(("sleep", topic))
        return self.notice


@dataclass
class FakeSub:
    topic: str = "persistent://public/default/t"
    subscription: str = "s"
    consumer_id: str = "c1"
    stopped: bool = False
    idle: IdleState = field(default_factory=IdleState)


@dataclass
class FakeCore:
    channel: FakeChannel | None
    stopping: bool = False
    closed_event: threading.Event = field(default_factory=threading.Event)


def empty_polls(core, sub, n: int) -> None:
    for _ in range(n):
        idle_after(core, sub, 0, failed=False)


def test_two_empty_long_polls_make_a_watch_and_the_empty_check_after_it_a_sleep() -> None:
    core, sub = FakeCore(FakeChannel()), FakeSub()
    empty_polls(core, sub, IDLE_POLLS - 1)
    assert core.channel.calls == []
    empty_polls(core, sub, 1)
    assert core.channel.calls == [("watch", sub.topic, "s", "c1")] and sub.idle.watched
    empty_polls(core, sub, 1)  # the check without waiting
    assert core.channel.calls[1:] == [("sleep", sub.topic)]
    assert (sub.idle.empty, sub.idle.watched) == (0, False)  # a notice: long-poll again


def test_a_keepalive_watches_again_at_once() -> None:
    core, sub = FakeCore(FakeChannel(notice=False)), FakeSub()
    empty_polls(core, sub, IDLE_POLLS + 1)
    assert [c[0] for c in core.channel.calls] == ["watch", "sleep", "watch"]
    assert sub.idle.watched


def test_a_refused_watch_keeps_long_polling_and_tries_after_each_empty_poll() -> None:
    core, sub = FakeCore(FakeChannel(accept=False)), FakeSub()
    empty_polls(core, sub, IDLE_POLLS + 1)
    assert [c[0] for c in core.channel.calls] == ["watch", "watch"]
    assert not sub.idle.watched


def test_messages_or_a_failed_receive_end_the_idle_spell() -> None:
    core, sub = FakeCore(FakeChannel()), FakeSub()
    empty_polls(core, sub, IDLE_POLLS)
    idle_after(core, sub, 3, failed=False)
    assert (sub.idle.empty, sub.idle.watched) == (0, False)
    empty_polls(core, sub, IDLE_POLLS)
    idle_after(core, sub, 0, failed=True)
    assert not sub.idle.watched and [c[0] for c in core.channel.calls] == ["watch", "watch"]


def test_without_a_channel_nothing_changes() -> None:
    core, sub = FakeCore(None), FakeSub()
    empty_polls(core, sub, 10)
    assert (sub.idle.empty, sub.idle.watched) == (0, False)


def test_a_subscribe_answer_keeps_replaces_or_drops_the_consumers_channel() -> None:
    log = logging.getLogger("test")
    first = channel_for(None, "ws://a/ws", dict, log)
    assert first is not None and channel_for(first, "ws://a/ws", dict, log) is first
    second = channel_for(first, "ws://b/ws", dict, log)  # the client switched deployments
    assert second is not None and second is not first and second.url == "ws://b/ws"
    assert not first.watch("t", "s", "c", IdleState())  # the old one is closed
    assert channel_for(second, None, dict, log) is None
