"""``ClientView``: what the client's parts (regex and list subscriptions, the retry letter
topic, ``Reader``, ``TableView``, ``Client.subscribe``'s work) see of the ``Client`` that
made them. They sit below ``magnetar.client``, which imports them, and take the client as
this protocol, so none of them imports it."""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from magnetar._topics import TopicName
    from magnetar._transport.http import Transport
    from magnetar.producer import Producer
    from magnetar.schema import Schema

__all__ = ["ClientView"]


class ClientView(Protocol):
    """A client's transport, logger, partition lookups, producers and consumer cores."""

    _t: Transport
    _log: logging.Logger
    _consumers: weakref.WeakSet[Any]  # the ConsumerCores closed with the client
    _partitions_update_interval_s: float  # how often partitioned readers look for growth

    def _partitions(self, name: TopicName) -> int: ...

    def _bytes_schema(self) -> Schema: ...

    def get_topic_partitions(self, topic: str) -> list[str]: ...

    def create_producer(self, topic: str, *args: Any, **kwargs: Any) -> Producer: ...
