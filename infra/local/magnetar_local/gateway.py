"""The local HTTP gateway: HTTP requests -> payload 2.0 events -> the real handlers, in-process.

Handlers are loaded, pooled and invoked by ``magnetar_local.handlers`` (``HandlerLoader``:
a handler that raises ``InvocationAbandoned`` ends as a timed-out or crashed Lambda does, a
504, its container thrown away; a failed one is a 502); HTTP/1.1 is read and written by
``magnetar_local.http_server`` (framing, keep-alive, open connections). Function timeouts
are not enforced (``get_remaining_time_in_millis`` still counts down).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path

from magnetar_core.api.metrics import emitting
from magnetar_local import function_url, http_headers
from magnetar_local.authorizer import LocalAuthorizer
from magnetar_local.events import (
    HttpRequest,
    HttpResponse,
    LambdaContext,
    build_event,
    json_response,
)
from magnetar_local.handlers import Handler, HandlerLoader
from magnetar_local.http_server import BacklogServer, OpenConnections, RequestHandler
from magnetar_local.lambda_api import LambdaInvokeApi
from magnetar_local.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from magnetar_local.metrics import METRICS_PATH, MetricsRegistry
from magnetar_local.routes import RouteMatch, RouteTable
from magnetar_local.served_routes import hands_routing_to_app, served_routes
from magnetar_local.template import FunctionSpec, RouteSpec
from magnetar_local.tls import ListenerTls

__all__ = ["Gateway"]

log = logging.getLogger("magnetar_local.gateway")


class Gateway:
    """A ThreadingHTTPServer that routes requests to handlers by the template's routes.

    ``port=0`` picks a free port. ``start`` serves in a daemon thread; ``stop`` shuts down
    (within ``poll_interval_s``, how often the serving loop looks for a shutdown).
    """

    poll_interval_s = 0.2

    def __init__(
        self,
        routes: list[RouteSpec],
        functions: Mapping[str, FunctionSpec],
        host: str = "127.0.0.1",
        port: int = 0,
        region: str = "us-east-1",
        account_id: str = "123456789012",
    ) -> None:
        self.host, self.requested_port = host, port
        self.region, self.account_id = region, account_id
        self.loader = HandlerLoader(functions)
        self._routes = list(routes)
        self.table = RouteTable(self._routes)
        self._lock = threading.Lock()  # the routes
        self.connections = OpenConnections()
        """The client connections open now (``kill`` resets them)."""
        self.authorizer: LocalAuthorizer | None = None
        self.server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.lambda_api: LambdaInvokeApi | None = None
        """Lambda's Invoke API for the event-source functions (``magnetar_local.lambda_api``;
        None: not served)."""
        self.metrics = MetricsRegistry()
        """The handlers' metrics, served at ``GET /metrics`` (``magnetar_local.metrics``)."""
        self.tls: ListenerTls | None = None
        """TLS on the listener (``magnetar local --tls-cert``; set before ``start``): the
        URL is then ``https://``, verified client certificates reach the events."""
        self.function_url: str | None = None
        """The function-URL front door (``magnetar local --front-door function-url``): the
        logical id of the function (``DataPlaneFunction``) that receives, as function-URL
        events (``$default``, no path parameters, no authorizer), every request whose route
        belongs to a handler app it serves (``magnetar_local.function_url``); None: each
        route's own function, as behind the HTTP API."""
        self._served: RouteTable | None = None  # _served_match's table
        self.observers: list[Callable[[RouteMatch, int], None]] = []
        """Called after each routed request with its match and answer's status (the
        local trigger driver watches commits through it); must not raise nor block."""

    def _served_match(self, request: HttpRequest, match: RouteMatch) -> RouteMatch:
        """What observers see of a request: behind a route that hands routing to its app
        (``ANY /admin/{proxy+}``), the app's route its path took (``PUT .../triggers/{name}``)
        with its parameters, as if it were a route of its own; else ``match``."""
        if not hands_routing_to_app(match.route):
            return match
        served = self._served
        if served is None:  # loads the apps' handler modules once, on the first need
            with self._lock:
                served = self._served = RouteTable(served_routes(self._routes, self.loader.functions))  # fmt: skip
        return served.match(request.method, request.raw_path) or match

    @property
    def port(self) -> int:
        """The bound port (after ``start``)."""
        return self.server.server_address[1] if self.server else self.requested_port

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:8080`` (``https://`` with TLS)."""
        return f"{'https' if self.tls is not None else 'http'}://{self.host}:{self.port}"

    def add_route(
        self, method: str, path: str, handler: Handler, name: str | None = None, timeout_s: int = 30
    ) -> RouteSpec:
        """Serve ``method path`` with ``handler`` (a callable(event, context)); returns the route."""
        name = name or f"Extra{len(self._routes)}Function"
        spec = FunctionSpec(
            name,
            name,
            code_dir=Path.cwd(),
            handler="app.lambda_handler",
            timeout_s=timeout_s,
            memory_mb=256,
        )
        self.loader.register(name, handler, spec)
        route = RouteSpec(method.upper(), path, name)
        with self._lock:
            self._routes.append(route)
            self.table, self._served = RouteTable(self._routes), None
        return route

    def remove_route(self, route: RouteSpec) -> None:
        """Stop serving a route added with ``add_route``."""
        with self._lock:
            self._routes.remove(route)
            self.table, self._served = RouteTable(self._routes), None

    def use_authorizer(
        self, function: str | None = "AuthorizerFunction", cache_s: int = 300,
        handler: Handler | None = None, identity_source: bool = True,
    ) -> LocalAuthorizer | None:  # fmt: skip
        """Run ``function`` (or ``handler`` in its place) as API Gateway runs a Lambda
        authorizer before every route (``magnetar_local.authorizer``), caching answers
        ``cache_s`` seconds (``identity_source`` False: none, and every request reaches
        it, with or without an Authorization header); None stops. Returns the authorizer
        step."""
        self.authorizer = (
            None
            if function is None
            else LocalAuthorizer(
                self.loader, function, cache_s, handler=handler, identity_source=identity_source
            )
        )
        return self.authorizer

    def has_route(self, method: str, path: str) -> bool:
        """True when ``method path`` matches a route whose handler file exists (or is registered)."""
        match = self.table.match(method, path)
        return match is not None and self.loader.available(match.route.function)

    def start(self) -> Gateway:
        """Bind and serve in a background thread. Raises OSError if the port is taken.

        Installs ``magnetar_local.http_headers`` in this process (idempotent): every request
        the gateway reads has its header block parsed into the same ``HTTPMessage`` without
        the ``email`` package."""
        http_headers.install()
        gateway = self

        class GatewayRequestHandler(RequestHandler):
            owner = gateway

        self.server = BacklogServer((self.host, self.requested_port), GatewayRequestHandler)
        self.server.daemon_threads = True
        if self.tls is not None:
            try:
                self.server.socket = self.tls.wrap(self.server.socket)
            except BaseException:
                self.server.server_close()
                raise
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": self.poll_interval_s},
            name="local-gateway",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent). Open keep-alive connections
        are still served (``kill`` resets them)."""
        server, self.server = self.server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def kill(self) -> None:
        """Stop as a crashed process does: stop serving and reset every open connection
        (clients see their kept-alive connections fail, not answered)."""
        self.stop()
        self.connections.reset()

    def invoke(self, request: HttpRequest) -> HttpResponse:
        """Route one request and run its handler; never raises (errors become 404/502 in
        the documented error shape). Every answer carries ``apigw-requestid``, the
        ``requestContext.requestId`` of its event, as API Gateway's do; a failed handler is
        logged with it. Lambda Invoke requests go to ``lambda_api`` when it is set. ``GET
        /metrics`` is the gateway's own: ``metrics`` in Prometheus' text format (no token
        asked, as Pulsar's ``authenticateMetricsEndpoint=false``); every handler's EMF
        record goes to ``metrics``."""
        if request.method in ("GET", "HEAD") and request.raw_path == METRICS_PATH:
            body = self.metrics.render().encode()
            return HttpResponse(200, [("Content-Type", METRICS_CONTENT_TYPE)], body)
        with emitting(self.metrics.record):
            return self._invoke(request)

    def _no_route(self, request: HttpRequest) -> HttpResponse:
        """404 NotFound; 405 NotAllowed with an Allow header when a route has the path
        under another method."""
        method, path = request.method, request.raw_path
        allowed = [m for m in _METHODS if self.table.match(m, path) is not None]
        if not allowed:
            return json_response(404, {"error": "NotFound", "message": f"no route for {method} {path}"})  # fmt: skip
        allow = ", ".join(allowed)
        message = f"{method} is not allowed on {path}; use {allow}"
        answer = json_response(405, {"error": "NotAllowed", "message": message})
        answer.headers.append(("Allow", allow))
        return answer

    def _invoke(self, request: HttpRequest) -> HttpResponse:
        if self.lambda_api is not None and self.lambda_api.matches(request):
            return self.lambda_api.invoke(request)
        match = self.table.match(request.method, request.raw_path)
        if match is None:
            return self._no_route(request)
        invoked = function_url.invoked(match, self.loader.functions, self.function_url)
        spec = self.loader.functions[invoked.route.function]
        event = build_event(request, invoked, account_id=self.account_id)
        request_id = event["requestContext"]["requestId"]
        authorizer = self.authorizer if invoked is match else None  # a URL has no authorizer
        refused = None
        if authorizer is not None and match.route.authorized:  # not Auth: Authorizer: NONE
            refused = authorizer.admit(event, self.region, self.account_id)
        if refused is not None:
            refused.headers.append(("apigw-requestid", request_id))
            return refused
        context = LambdaContext(
            spec.name, spec.memory_mb, spec.timeout_s, self.region, self.account_id
        )
        response = self.loader.invoke(invoked.route.function, event, context, match.route)
        response.headers.append(("apigw-requestid", request_id))
        observed = self._served_match(request, match)
        for observe in list(self.observers):
            try:
                observe(observed, response.status)
            except Exception:  # an observer's bug never fails the request
                log.exception("request %s: an observer failed", request_id)
        return response


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
