"""A consumer or reader of a partitioned topic follows its partition count, as Pulsar's
clients do (``partitionsUpdateInterval``, 60 s by default): once per interval, on a daemon
thread, it asks for the count and subscribes to the new partitions from their earliest
message, so nothing produced there before it noticed is skipped. Partition counts never
shrink (producers: ``_producer.growth``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from magnetar import exceptions as exc
from magnetar._topics import TopicName

if TYPE_CHECKING:
    from .client_view import ClientView
    from .core import Core


def follow_partitions(client: ClientView, core: Core, name: TopicName, subscription: str,
                      partitions: int) -> None:  # fmt: skip
    """Start the thread that subscribes ``core`` to the partitions ``name`` gains beyond
    ``partitions``, every ``client._partitions_update_interval_s`` seconds, until the
    consumer closes or no longer reads ``name`` (a regex subscription dropped it)."""
    prefix = f"{name}-partition-"

    def run() -> None:
        known = partitions
        while not core.closed_event.wait(max(client._partitions_update_interval_s, 0.1)):
            if not any(s.topic.startswith(prefix) for s in core.subs):
                return
            try:
                count = client._partitions(name)
            except exc.PulsarException:
                continue
            for i in range(known, count):
                added = name.partition(i)
                try:
                    core.register(str(added), added.path(), subscription, i,
                                  new_partition_body(core.body))  # fmt: skip
                except exc.PulsarException as e:
                    core.log.warning("consumer on %s: subscribing to new partition %s failed, "
                                     "retrying: %s", name, added, e)  # fmt: skip
                    break
                known = i + 1
                core.log.info("consumer on %s: subscribed to new partition %s", name, added)

    thread = threading.Thread(target=run, daemon=True, name=f"magnetar-partitions-{name}")
    core.helpers.append(thread)
    thread.start()


def new_partition_body(body: dict) -> dict:
    """The subscribe body for a partition added after the consumer subscribed: its earliest
    message first (a reader's start id names another partition's message)."""
    fresh = {
        k: v for k, v in body.items() if k not in ("startMessageId", "startMessageIdInclusive")
    }
    fresh["initialPosition"] = "Earliest"
    return fresh
