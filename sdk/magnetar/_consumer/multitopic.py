"""Multi-topic consumers: a list of topics, or a regex over one namespace with auto-discovery.

Regex subscriptions follow the Java and C++ clients: the pattern's ``tenant/namespace`` names
the namespace that is listed (``GET /admin/v2/{domain}/{tenant}/{namespace}``); partitions are
listed by partition name and folded back into their partitioned topic; a topic matches when
the pattern, without its domain, matches the whole ``tenant/namespace/topic`` (the pattern's
domain is ignored: ``regex_subscription_mode`` chooses persistent and/or non-persistent
topics). Unlike Pulsar, a short pattern without ``tenant/namespace`` (``"finance-.*"``) means
``public/default/finance-.*`` instead of matching nothing.

Every ``pattern_auto_discovery_period`` seconds a daemon thread (``magnetar-discovery-...``)
lists the namespace again, subscribes to new matching topics and closes the sub-consumers of
topics that are gone; it stops when the consumer closes. Magnetar refuses non-persistent
topics (``NotAllowedError``) today, so they are skipped, with one warning each.
"""

from __future__ import annotations

import logging
import random
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from magnetar import exceptions as exc
from magnetar._enums import RegexSubscriptionMode
from magnetar._topics import TopicName, parse_pattern, parse_topic

from .partitions import follow_partitions

if TYPE_CHECKING:
    from magnetar._transport.http import Transport

    from .client_view import ClientView
    from .core import Core

__all__ = ["Pattern", "PatternWatcher", "list_topics_fake_name", "remove_topic", "subscribe_topic"]

_DOMAINS = {
    RegexSubscriptionMode.PersistentOnly: ("persistent",),
    RegexSubscriptionMode.NonPersistentOnly: ("non-persistent",),
    RegexSubscriptionMode.AllTopics: ("persistent", "non-persistent"),
}
_PARTITION = re.compile(r"-partition-[0-9]+$")


def list_topics_fake_name(topics: list[TopicName]) -> str:
    """What pulsar-client's ``Consumer.topic()`` returns for a list subscription: the last
    topic's name, ``-TopicsConsumerFakeName-`` and 10 random hex digits."""
    suffix = "".join(random.choice("0123456789abcdef") for _ in range(10))
    return f"{topics[-1]}-TopicsConsumerFakeName-{suffix}"


@dataclass(frozen=True)
class Pattern:
    """A parsed regex subscription."""

    namespace: TopicName  # tenant / namespace to list (local is the pattern's regex)
    regex: re.Pattern  # matched against ``tenant/namespace/topic``
    display: str  # what ``Consumer.topic()`` returns: the pattern as a full topic name
    mode: RegexSubscriptionMode

    @classmethod
    def parse(cls, pattern: re.Pattern, mode: RegexSubscriptionMode) -> Pattern:
        """Parse ``re.compile("persistent://tenant/ns/regex")`` (or a shorter form).

        Raises:
            InvalidTopicName: the pattern is not of the form ``[domain://]tenant/ns/regex``.
        """
        text = pattern.pattern
        if not isinstance(text, str):
            raise ValueError("Argument topic is expected to be a str regex pattern, not bytes")
        name = parse_pattern(text)
        rest = text.split("://", 1)[1] if "://" in text else text
        if "/" not in rest:
            rest = f"{name.tenant}/{name.namespace}/{rest}"
        try:
            regex = re.compile(rest, pattern.flags)
        except re.error as e:
            raise exc.InvalidTopicName(f"Invalid topic pattern {text!r}: {e}") from None
        return cls(name, regex, str(name), mode)

    def matches(self, topic: str) -> bool:
        """Whether the (base) topic name is one this subscription wants."""
        domain, _, rest = topic.partition("://")
        return domain in _DOMAINS[self.mode] and self.regex.fullmatch(rest) is not None

    def list(self, transport: Transport, log: logging.Logger) -> set[str]:
        """The matching topics of the namespace now (partitioned topics by base name).

        Raises:
            PulsarException: the namespace could not be listed.
        """
        found: set[str] = set()
        for domain in _DOMAINS[self.mode]:
            path = f"/admin/v2/{domain}/{self.namespace.tenant}/{self.namespace.namespace}"
            try:
                names = transport.call("GET", path)
            except exc.NotAllowedError as e:  # non-persistent topics are not served
                log.debug("listing %s topics refused: %s", domain, e)
                continue
            for topic in names if isinstance(names, list) else []:
                if isinstance(topic, str):
                    base = _PARTITION.sub("", topic)
                    if self.matches(base):
                        found.add(base)
        return found


def subscribe_topic(client: ClientView, core: Core, name: TopicName, subscription: str) -> None:
    """Register ``core`` on ``name`` (on every partition of a partitioned topic, and on the
    partitions it gains later: ``partitions``)."""
    n = client._partitions(name)
    for i, t in enumerate([name.partition(i) for i in range(n)] if n else [name]):
        core.register(str(t), t.path(), subscription, i if n else -1)
    if n:
        follow_partitions(client, core, name, subscription, n)


class PatternWatcher:
    """The discovery thread of one regex consumer. Holds the consumer's core, never the public
    ``Consumer``, so dropping the consumer still closes it."""

    def __init__(self, client: ClientView, core: Core, pattern: Pattern, subscription: str,
                 period: float, topics: set[str]) -> None:  # fmt: skip
        self._client = client
        self._core = core
        self._pattern = pattern
        self._subscription = subscription
        self._period = max(period, 0.1)
        self.topics = set(topics)  # subscribed base names
        self._skipped: set[str] = set()  # refused (non-persistent): not retried
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the discovery thread (again, after ``stop``)."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"magnetar-discovery-{self._pattern.display}")  # fmt: skip
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (a discovery round in progress finishes first)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def listed(self, topic: str) -> bool:
        """Whether the namespace lists ``topic`` (a partition: its topic) now; False when it
        cannot be listed (the next discovery round decides)."""
        try:
            return _PARTITION.sub("", topic) in self._pattern.list(self._core.t, self._core.log)
        except exc.PulsarException:
            return False

    def subscribe_new(self, found: set[str], *, strict: bool = False) -> None:
        """Subscribe to the topics of ``found`` not subscribed yet, skipping refused ones.
        Other failures are retried next round, or raised when ``strict`` (at subscribe)."""
        log = self._core.log
        for topic in sorted(found - self.topics - self._skipped):
            if self._stop.is_set():
                return
            try:
                subscribe_topic(self._client, self._core, parse_topic(topic), self._subscription)
            except exc.AlreadyClosed:
                raise
            except exc.PulsarException as e:
                remove_topic(self._core, topic)  # partitions registered before the failure
                if strict and not isinstance(e, exc.NotAllowedError):
                    raise
                if not isinstance(e, exc.NotAllowedError):
                    log.warning("pattern %s: subscribing to %s failed, retrying next round: %s",
                                self._pattern.display, topic, e)  # fmt: skip
                    continue
                self._skipped.add(topic)
                log.warning("pattern %s: skipping %s, which the service refuses (%s)",
                            self._pattern.display, topic, e)  # fmt: skip
                continue
            self.topics.add(topic)
            log.info("pattern %s: subscribed to new topic %s", self._pattern.display, topic)

    def _run(self) -> None:
        log = self._core.log
        while not self._stop.wait(self._period):
            try:
                found = self._pattern.list(self._core.t, log)
            except exc.AlreadyClosed:
                return
            except exc.PulsarException as e:
                log.warning("pattern %s: listing the namespace failed: %s",
                            self._pattern.display, e)  # fmt: skip
                continue
            for topic in sorted(self.topics - found):
                log.info("pattern %s: topic %s is gone", self._pattern.display, topic)
                remove_topic(self._core, topic)
                self.topics.discard(topic)
            try:
                self.subscribe_new(found)
            except exc.AlreadyClosed:
                return


def remove_topic(core: Core, topic: str) -> None:
    """Close the sub-consumers of ``topic`` (and of its partitions) and drop their queued
    messages: the topic left a regex subscription (deleted, or never subscribable)."""
    with core.cond:
        gone = [s for s in core.subs if s.topic == topic
                or s.topic.rsplit("-partition-", 1)[0] == topic]  # fmt: skip
        if not gone:
            return
        core.subs = [s for s in core.subs if s not in gone]
        kept = [(s, m) for s, m in core.queue if s not in gone]
        core.queue.clear()
        core.queue.extend(kept)
        for s in gone:
            s.stopped = True
        core.cond.notify_all()
    for s in gone:
        if core.acks is not None:
            core.acks.dropped(s)
        if s.poll is not None:
            s.poll.abort()
        if s.thread is not None and s.thread is not threading.current_thread():
            s.thread.join()
        try:
            core.t.call("DELETE", f"{s.base}/{s.consumer_id}")
        except exc.PulsarException as e:  # the topic may be deleted already
            core.log.debug("closing consumer %s on %s: %s", s.consumer_id, s.topic, e)
