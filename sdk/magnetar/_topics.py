"""Topic names as the client accepts them, on the shared ``magnetar_wire.names.TopicName``.

A short name ``t`` means ``persistent://public/default/t``; ``tenant/ns/t`` means
``persistent://tenant/ns/t`` (Pulsar's client accepts both). The rules are the service's
(``magnetar_wire.names``); a broken one raises this package's ``InvalidTopicName``.
"""

from __future__ import annotations

import re

from magnetar_wire import names

from .exceptions import InvalidTopicName

__all__ = ["TopicName", "parse_pattern", "parse_topic"]

TopicName = names.TopicName
_UNPRINTABLE = re.compile(r"[\s%\x00-\x1f]")


def _expanded(topic: str) -> str:
    """``tenant/ns/t`` as ``persistent://tenant/ns/t``; any other text unchanged."""
    if isinstance(topic, str) and "://" not in topic and topic.count("/") == 2:
        return f"persistent://{topic}"
    return topic


def parse_topic(topic: str) -> TopicName:
    """Parse and validate ``topic`` (full, ``tenant/ns/t`` or short).

    Raises:
        InvalidTopicName: the name is empty or breaks the naming rules.
    """
    try:
        return TopicName.parse(_expanded(topic))
    except names.InvalidTopicName as e:
        raise InvalidTopicName(e.message) from None


def parse_pattern(text: str) -> TopicName:
    """The topic name of a regex subscription's pattern (``[[domain://]tenant/ns/]regex``):
    domain, tenant and namespace checked as a topic's; ``local`` is the regex, which must be
    non-empty, without spaces, control characters or '%'.

    Raises:
        InvalidTopicName: the namespace part is malformed or the regex is empty.
    """
    head, slash, regex = text.rpartition("/")
    namespace = parse_topic(f"{head}{slash}x")  # validates all but the regex
    if not regex or _UNPRINTABLE.search(regex):
        raise InvalidTopicName(
            f"Invalid topic pattern {text!r}: the topic regex must be non-empty, without "
            "spaces, control characters or '%'"
        )
    return TopicName(namespace.domain, namespace.tenant, namespace.namespace, regex)
