"""``TableView``: a key -> latest value map of a topic, kept up to date (pulsar-client's).

Made by ``Client.create_table_view(topic, subscription_name=None, schema=BytesSchema())``.
It reads the topic with one reader per partition (the topic itself when not partitioned),
each on a non-durable cursor over the compacted view (``is_read_compacted=True``) from the
earliest message, then the live log. Creation returns once every reader has caught up with
the messages that existed (as Pulsar's); afterwards one daemon thread per reader,
``magnetar-table-view-<topic>``, applies new messages until ``close``.

As in Pulsar: a message's key is its ``partition_key``; a message without one is skipped; an
empty payload (a null value or ``b""``) deletes the key (a tombstone), and listeners are
called for it too, with the schema's decoding of ``b""``. Values are kept as bytes and
decoded with the schema on each ``get`` / ``for_each`` / listener call. As pulsar-client's,
the callbacks of a view with ``BytesSchema`` (the default) get the value as text (UTF-8,
undecodable bytes kept as surrogates) while ``get`` returns bytes: its extension hands the
callbacks a Python ``str`` made from the value.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import exceptions as exc
from ._topics import parse_topic
from .message import Message, MessageId
from .reader import Reader
from .schema import BytesSchema, Schema

if TYPE_CHECKING:
    from ._consumer.client_view import ClientView

__all__ = ["TableView"]

# Catching up at creation waits at most this long for the next message (ms) while the topic
# says more exist: a compacted view may lack the topic's last message (a tombstone that
# compaction removed with its key), so "more exist" can stay true with nothing to read.
CATCH_UP_WAIT_MS = 1000


class TableView:
    """The latest value of each key of a topic. Thread-safe; listeners run on the table
    view's reader threads, one call at a time."""

    def __init__(self, client: ClientView, topic: str, subscription: str | None,
                 schema: Schema) -> None:  # fmt: skip
        """Read the topic up to its last message, then follow it (see the module).

        Raises what ``Client.create_reader`` raises (``InvalidTopicName``, ``ConsumerBusy``
        when ``subscription`` is taken, ...).
        """
        self._topic = topic
        self._subscription = subscription
        self._schema = schema
        self._log: logging.Logger = client._log
        self._data: dict[str, bytes] = {}
        self._data_lock = threading.Lock()
        self._listen_lock = threading.RLock()  # held while listeners run or are added
        self._listeners: list[Callable[[str, Any], None]] = []
        self._readers: list[Reader] = []
        self._threads: list[threading.Thread] = []
        try:
            for partition in client.get_topic_partitions(topic):
                self._readers.append(Reader(
                    client, parse_topic(partition), MessageId.earliest, reader_name=None,
                    receiver_queue_size=1000, inclusive=False, reader_listener=None,
                    read_compacted=True, schema=schema, subscription=subscription,
                ))  # fmt: skip
            for reader in self._readers:
                self._catch_up(reader)
        except BaseException:
            self.close()
            raise
        for reader in self._readers:
            thread = threading.Thread(target=self._follow, args=(reader,), daemon=True,
                                      name=f"magnetar-table-view-{reader.topic()}")  # fmt: skip
            thread.start()
            self._threads.append(thread)

    def get(self, key: str) -> Any | None:
        """The decoded value of ``key``, or None when the view has no such key."""
        with self._data_lock:
            data = self._data.get(key)
        return None if data is None else self._schema.decode(data)

    def size(self) -> int:
        """The number of keys (the C++ client's ``size()``; ``len(view)`` as well)."""
        with self._data_lock:
            return len(self._data)

    def __len__(self) -> int:
        return self.size()

    def for_each(self, callback: Callable[[str, Any], None]) -> None:
        """Call ``callback(key, value)`` for each key, on a snapshot of the view."""
        with self._data_lock:
            items = list(self._data.items())
        for key, data in items:
            callback(key, self._callback_value(data))

    def _callback_value(self, data: bytes) -> Any:
        """A value as ``for_each`` and listeners get it (text for ``BytesSchema``)."""
        if type(self._schema) is BytesSchema:
            return data.decode("utf-8", "surrogateescape")
        return self._schema.decode(data)

    def for_each_and_listen(self, callback: Callable[[str, Any], None]) -> None:
        """``for_each(callback)``, then call it for every later message with a key (deletes
        included): no update falls between the two."""
        with self._listen_lock:
            self.for_each(callback)
            self._listeners.append(callback)

    def close(self) -> None:
        """Close the readers and join the threads; ``get`` keeps answering from what was
        read."""
        for reader in self._readers:
            try:
                reader.close()
            except exc.PulsarException as e:  # the cursor lapses with its lease
                self._log.warning("closing the table view of %s: %s", self._topic, e)
        me = threading.current_thread()
        for thread in self._threads:
            if thread is not me:
                thread.join()

    def __str__(self) -> str:
        if self._subscription is None:
            return f"TableView(topic={self._topic})"
        return f"TableView(topic={self._topic}, subscription={self._subscription})"

    __repr__ = __str__

    # ------------------------------------------------------------------ reading

    def _catch_up(self, reader: Reader) -> None:
        while reader.has_message_available():
            try:
                self._apply(reader.read_next(CATCH_UP_WAIT_MS))
            except exc.Timeout:
                return

    def _follow(self, reader: Reader) -> None:
        while True:
            try:
                msg = reader.read_next()
            except exc.AlreadyClosed:
                return
            except exc.PulsarException as e:  # the reader retries receives itself
                self._log.warning("table view of %s: %s", self._topic, e)
                continue
            self._apply(msg)

    def _apply(self, msg: Message) -> None:
        key = msg.partition_key()
        if not key:
            self._log.debug("table view of %s skips %s: no key", self._topic, msg.message_id())
            return
        data = msg.data()
        with self._data_lock:
            if data:
                self._data[key] = data
            else:
                self._data.pop(key, None)
        with self._listen_lock:
            for listener in self._listeners:
                try:
                    listener(key, self._callback_value(data))
                except Exception:
                    self._log.exception("a table view listener of %s raised", self._topic)
