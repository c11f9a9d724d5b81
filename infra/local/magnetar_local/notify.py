"""The local notification channel: API Gateway's WebSocket API and its management API, in
one process (``magnetar_core.api.notify``).

``NotifyServer`` serves WebSocket connections on a port of its own (as API Gateway's
separate ``wss://`` URL) and turns them into the WebSocket API's Lambda events for the real
``NotifyFunction`` handler (``invoke``): ``$connect`` during the handshake (a refusal is
answered with the handler's status, as API Gateway does), one event per text message routed
by its ``action`` (``watch``; anything else is ``$default``), whose answer body is sent back
(a two-way route), and ``$disconnect`` when the socket closes. Its ``post`` is what the
management API's ``post_to_connection`` is to the fan-out (False: the connection is gone,
API Gateway's 410).

``NoticeFeeder`` stands in for the log table's stream: a gateway observer that, for each
successful produce (and nack, redelivery, seek, consumer close: ``REDELIVERING``) while
some connection is open, has the engine post the notices of the
produced partition, on a daemon thread of its own (observers must not block).
"""

from __future__ import annotations

import base64
import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve

from magnetar_core.domain.notify import CONNECTION_PREFIX, CONNECTION_SK
from magnetar_core.engine import Engine
from magnetar_local.routes import RouteMatch
from magnetar_wire.names import TopicName

log = logging.getLogger(__name__)
PRODUCE = ("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages")
CONSUMER = (
    "/v1/{domain}/{tenant}/{namespace}/{topic}/subscriptions/{subscription}/consumers/{consumerId}"
)
REDELIVERING = {
    ("POST", CONSUMER + "/nack"),
    ("POST", CONSUMER + "/redeliver"),
    ("POST", CONSUMER + "/seek"),
    ("DELETE", CONSUMER),
}
RESET = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/resetcursor"
"""A cursor reset (by message id, or ``/{timestamp}``): the feeder wakes the topic's
partitions through the engine as the admin handler does on AWS."""
"""Routes that may make entries deliverable without a commit (their services wake the
sleepers through ``Notify.wake`` on AWS; here the feeder does, for every success)."""
STAGE = "ws"
Invoke = Callable[[dict], dict]
"""Runs the channel function on one WebSocket API event and returns its answer."""


class NotifyServer:
    """WebSocket connections -> the channel function's events (see the module). ``invoke``
    may be set after ``start`` (before the first connection)."""

    def __init__(self, invoke: Invoke | None = None, host: str = "127.0.0.1", port: int = 0):
        self.invoke = invoke
        self.host, self.requested_port = host, port
        self._lock = threading.Lock()
        self._open: dict[str, ServerConnection] = {}
        self._ids: dict[int, str] = {}  # id(connection) -> connection id, from the handshake
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self.posted = 0
        """Notices posted so far (messages API Gateway would bill)."""
        self.received = 0
        """Messages received from clients so far (billed as well)."""
        self.invocations = 0
        """Channel function invocations so far ($connect, messages, $disconnect)."""
        self.handler_seconds = 0.0
        """Time spent in those invocations (the Lambda duration proxy)."""

    @property
    def port(self) -> int:
        return self._server.socket.getsockname()[1] if self._server else self.requested_port

    @property
    def url(self) -> str:
        """The channel's URL, e.g. ``ws://127.0.0.1:8765/ws`` (what NOTIFY_URL says)."""
        return f"ws://{self.host}:{self.port}/{STAGE}"

    def start(self) -> NotifyServer:
        """Listen (a free port when 0) and serve on a daemon thread. Raises OSError."""
        self._server = serve(self._serve, self.host, self.requested_port,
                             process_request=self._connect, ping_interval=None,
                             compression=None)  # fmt: skip
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="notify-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close every connection and stop listening (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
        if self._thread is not None:
            self._thread.join(5)

    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    def post(self, connection_id: str, data: bytes) -> bool:
        """Send ``data`` (text) to a connection; False when it is gone."""
        with self._lock:
            connection = self._open.get(connection_id)
        if connection is None:
            return False
        try:
            connection.send(data.decode())
        except ConnectionClosed:
            return False
        with self._lock:
            self.posted += 1
        return True

    def disconnect_stale(self, dynamodb: Any, table: str) -> int:
        """``$disconnect`` every connection the notify table lists that this server does not
        hold: after a restart of a durable stack those died with the process before it, and
        no ``$disconnect`` came for them, so their watches would hold their consumers (and
        the entries in flight to them) for ``HOLD_MS``, 2 h, not one lease. Returns how many
        (API Gateway sends ``$disconnect`` itself when a socket closes)."""
        pages = dynamodb.get_paginator("scan").paginate(
            TableName=table,
            FilterExpression="begins_with(pk, :conn) AND sk = :own",
            ExpressionAttributeValues={":conn": {"S": CONNECTION_PREFIX},
                                       ":own": {"S": CONNECTION_SK}},
            ProjectionExpression="pk",
        )  # fmt: skip
        ids = [i["pk"]["S"][len(CONNECTION_PREFIX) :] for page in pages for i in page["Items"]]
        with self._lock:  # neither open nor in its handshake on this server
            live = set(self._open) | set(self._ids.values())
            stale = [c for c in ids if c not in live]
        for connection_id in stale:
            self._call(self._event(connection_id, "$disconnect", "DISCONNECT"))
        return len(stale)

    # -- the API Gateway side -------------------------------------------------------------

    def _event(self, connection_id: str, route: str, kind: str, **extra: Any) -> dict:
        now_ms = int(time.time() * 1000)
        context = {"routeKey": route, "eventType": kind, "connectionId": connection_id,
                   "domainName": f"{self.host}:{self.port}", "stage": STAGE, "apiId": "local",
                   "requestId": uuid.uuid4().hex, "requestTimeEpoch": now_ms,
                   "messageDirection": "IN"}  # fmt: skip
        return {"requestContext": context, "isBase64Encoded": False, **extra}

    def _call(self, event: dict) -> dict:
        if self.invoke is None:
            return {"statusCode": 503, "body": "the channel function is not loaded"}
        start = time.perf_counter()
        try:
            return self.invoke(event)
        except Exception:  # the handler crashed: API Gateway answers an internal error
            log.exception("the channel function failed on %s", event["requestContext"]["routeKey"])
            return {"statusCode": 500, "body": json.dumps({"message": "Internal server error"})}
        finally:
            with self._lock:
                self.invocations += 1
                self.handler_seconds += time.perf_counter() - start
                self.received += event["requestContext"]["eventType"] == "MESSAGE"

    def _connect(self, connection: ServerConnection, request: Request) -> Response | None:
        """``$connect`` during the handshake: None accepts, a Response refuses."""
        connection_id = base64.b64encode(uuid.uuid4().bytes[:9]).decode()
        query = dict(parse_qsl(urlsplit(request.path).query))
        headers = {name: value for name, value in request.headers.raw_items()}
        answer = self._call(self._event(connection_id, "$connect", "CONNECT",
                                        queryStringParameters=query, headers=headers))  # fmt: skip
        status = int(answer.get("statusCode", 200))
        if status != 200:
            return connection.respond(HTTPStatus(status), str(answer.get("body") or ""))
        with self._lock:
            self._ids[id(connection)] = connection_id
        return None

    def _serve(self, connection: ServerConnection) -> None:
        with self._lock:
            connection_id = self._ids.pop(id(connection))
            self._open[connection_id] = connection
        try:
            for message in connection:
                text = message if isinstance(message, str) else message.decode()
                answer = self._call(self._event(connection_id, _route_of(text), "MESSAGE",
                                                body=text))  # fmt: skip
                if answer.get("body"):
                    connection.send(str(answer["body"]))
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self._open.pop(connection_id, None)
            self._call(self._event(connection_id, "$disconnect", "DISCONNECT"))


def _route_of(text: str) -> str:
    """The route API Gateway selects by ``$request.body.action``."""
    try:
        action = json.loads(text).get("action")
    except (ValueError, AttributeError):
        return "$default"
    return action if action == "watch" else "$default"


class NoticeFeeder:
    """A gateway observer posting the notices of each produced partition (see the module)."""

    def __init__(self, engine: Engine, server: NotifyServer) -> None:
        self.engine, self.server = engine, server
        self._topics: queue.SimpleQueue[tuple[TopicName, bool] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="notice-feeder", daemon=True)
        self._thread.start()

    def observe(self, match: RouteMatch, status: int) -> None:
        route, params = match.route, match.path_parameters
        key = (route.method, route.path)
        reset = route.method == "POST" and route.path.startswith(RESET)
        if (key != PRODUCE and key not in REDELIVERING and not reset) or not 200 <= status < 300:
            return
        if self.server.open_connections():
            topic = TopicName.of(params["domain"], params["tenant"], params["namespace"],
                                 params["topic"])  # fmt: skip
            self._topics.put((topic, reset))

    def stop(self) -> None:
        self._topics.put(None)
        self._thread.join(5)

    def _run(self) -> None:
        while (item := self._topics.get()) is not None:
            topic, reset = item
            try:
                names = [topic]
                if reset:  # a reset names a partitioned topic's base: wake every partition
                    meta = self.engine.topics.cached_meta(topic)
                    parts = meta.partitions if meta is not None else 0
                    names = [topic.partition(i) for i in range(parts)] if parts else [topic]
                self.engine.notify.notify([str(n) for n in names])
            except Exception:  # the emulator stopping, a bug: logged, not fatal
                log.exception("notices of %s failed", topic)
