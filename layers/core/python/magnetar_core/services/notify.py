"""The notification channel's use cases (issue 16, ``domain.notify``): connect, watch,
disconnect, and the notices a commit sends to the connections watching its partitions."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from magnetar_core.domain import notify
from magnetar_core.domain.errors import NotAllowedError
from magnetar_core.domain.runtime import Runtime
from magnetar_core.ports import Connections, WatchStore
from magnetar_core.services.subscriptions.holds import Holds
from magnetar_wire.names import TopicName

log = logging.getLogger(__name__)


@dataclass
class NoticeResult:
    """What ``Notify.notify`` did: notices posted, and the connections found gone (their
    watches and holds were dropped)."""

    posted: int = 0
    gone: list[str] = field(default_factory=list)


class Notify:
    """Connections, watches and notices. ``connections`` None: nothing is posted (no channel
    is deployed; ``notify`` then costs nothing, not even a lookup)."""

    def __init__(
        self,
        watches: WatchStore,
        connections: Connections | None,
        holds: Holds,
        runtime: Runtime,
        hold_ms: int = notify.HOLD_MS,
        url: str | None = None,
    ) -> None:
        self.url = url
        """The channel's WebSocket URL told to consumers (None: no channel advertised)."""
        self._watches = watches
        self._connections = connections
        self._holds = holds
        self._runtime = runtime
        self._hold_ms = hold_ms

    @property
    def enabled(self) -> bool:
        """Whether a channel is deployed (notices can be posted)."""
        return self._connections is not None

    def connect(self, connection_id: str, role: str | None) -> None:
        """Record a new connection with the role its token proved (the edge authenticated
        it). Raises what the store raises."""
        self._watches.connect(connection_id, role, self._expires_ms())

    def watch(self, connection_id: str, body: object) -> tuple[int, int | None]:
        """Hold each named consumer's lease for this connection and store the watches;
        returns how many, and in how many ms a watched cursor may have work without a commit
        (a delay timer's release, another consumer's lease end; None: only a commit). Raises InvalidMessage / InvalidTopicName (a bad body),
        NotAllowedError (an unknown connection: connect again), TopicNotFound,
        SubscriptionNotFound, ConsumerNotFound, AuthorizationError (not the consumer's
        role); nothing is stored for a body that fails (holds already taken stay until the
        connection ends)."""
        watches = notify.parse_watches(body, connection_id)
        known, role = self._watches.connection(connection_id)
        if not known:
            raise NotAllowedError(f"connection {connection_id} is not open; connect again")
        dues = []
        for w in watches:
            topic = TopicName.parse(w.topic)
            dues.append(self._holds.hold(topic, w.subscription, w.consumer_id, connection_id, role))
        self._watches.put(watches, self._expires_ms())
        due = min((d for d in dues if d is not None), default=None)
        return len(watches), None if due is None else max(0, due - self._runtime.now_ms())

    def disconnect(self, connection_id: str) -> int:
        """Forget the connection and its watches and release the holds it took (idempotent);
        returns how many holds were released. Raises what the stores raise."""
        released = 0
        for w in self._watches.disconnect(connection_id):
            topic = TopicName.parse(w.topic)
            released += self._holds.release(topic, w.subscription, w.consumer_id, connection_id)
        return released

    def notify(self, topics: list[str]) -> NoticeResult:
        """Post a notice to each connection watching one of ``topics`` (partitions' full
        names) and consume those watches; a connection found gone is disconnected. Raises
        what the stores raise (the caller retries: a notice may then come twice, which the
        consumer only answers with one more receive)."""
        result = NoticeResult()
        if self._connections is None:
            return result
        for topic in topics:
            for w in self._watches.of_topic(topic):
                if w.connection_id in result.gone or not self._watches.consume(w):
                    continue
                if self._connections.post(w.connection_id, notify.notice(topic)):
                    result.posted += 1
                else:
                    log.info("connection %s is gone: its watches end", w.connection_id)
                    result.gone.append(w.connection_id)
                    self.disconnect(w.connection_id)
        return result

    def wake(self, topic: TopicName, moved: int = 1) -> None:
        """After an operation that made ``moved`` entries of partition ``topic`` deliverable
        again without a commit (a nack, a redelivery, a closed consumer's entries, a seek):
        notify the watchers as a commit would. Never raises (a lost notice is found by the
        sleepers' next keepalive); costs nothing without a channel or when nothing moved."""
        if not moved or self._connections is None:
            return
        try:
            self.notify([str(topic)])
        except Exception:
            log.exception("notices of %s after a redelivery failed", topic)

    def _expires_ms(self) -> int:
        return self._runtime.now_ms() + self._hold_ms
