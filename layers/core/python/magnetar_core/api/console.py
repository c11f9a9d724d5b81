"""The console: a static page (``GET /console``, ``GET /console/{proxy+}``) and the history
its charts draw (``GET /console/api/history/{domain}/{tenant}/{namespace}/{topic}``).

The page is three files of package data (``console_page``), served to anyone: they hold no
data (the template routes them without the authorizer). Everything the page shows it asks
of the HTTP API with the caller's token (``Authorization: Bearer``), so a caller sees what
the token may: the admin routes, and the history route, which is guarded as a topic's stats
are (produce or consume on the topic).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any

from magnetar_core.api import http, metrics, request
from magnetar_core.engine import Engine
from magnetar_core.ports import MetricsHistory
from magnetar_core.services.console_history import ConsoleHistory
from magnetar_wire.names import TopicName

PAGE_PREFIX = "/console"
API_PREFIX = "/console/api/"
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "console.js": ("console.js", "text/javascript; charset=utf-8"),
    "console.css": ("console.css", "text/css; charset=utf-8"),
}
"""Path after ``/console/`` -> (file of ``console_page``, content type)."""
HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
}


def page_response(path: str) -> dict[str, Any]:
    """The payload 2.0 answer for the console page's ``path`` (``/console``,
    ``/console/console.js``...): the file, or a 404 NotFound in the error shape."""
    rest = path[len(PAGE_PREFIX) :].lstrip("/") if path.startswith(PAGE_PREFIX) else None
    if rest is None or rest not in FILES:
        message = f"No console file at {path[:200]}"
        body = json.dumps({"error": "NotFound", "message": message})  # http.error_response's shape
        return {"statusCode": 404, "headers": {"Content-Type": "application/json"}, "body": body}
    name, content_type = FILES[rest]
    text = resources.files("magnetar_core.api.console_page").joinpath(name).read_text("utf-8")
    return {"statusCode": 200, "headers": {**HEADERS, "Content-Type": content_type}, "body": text}


def history_app(engine: Callable[[], Engine], source: Callable[[], MetricsHistory]) -> Any:
    """The guarded resolver of the history route, on ``engine()``'s stats and ``source()``."""
    app = http.make_app(engine)

    def stats_of(name: TopicName) -> Any:
        admin = engine().admin
        partitioned = name.partition_index < 0 and engine().topics.get(name).partitions > 0
        return admin.stats(name, partitioned=partitioned)

    def now_ms() -> int:
        return engine().runtime.now_ms()

    console = ConsoleHistory(source, stats_of, now_ms)

    @app.get(API_PREFIX + "history/<domain>/<tenant>/<namespace>/<topic>")
    def history(domain: str, tenant: str, namespace: str, topic: str):
        return http.ok(console.history(request.topic_of(domain, tenant, namespace, topic)))

    return app


def lazy_history(engine: http.ContainerEngine) -> Callable[[], MetricsHistory]:
    """The history source of ``engine``'s container, made on first use: the one injected
    beside an injected engine, else the one the settings its engine was built from name
    (``METRICS_HISTORY``; ``ContainerEngine.history``). Reads no environment itself."""
    made: list[MetricsHistory] = []
    lock = threading.Lock()

    def source() -> MetricsHistory:
        with lock:
            if not made:
                made.append(engine.history(metrics.SERVICE))
            return made[0]

    return source


def lambda_handler(
    engine: Callable[[], Engine], source: Callable[[], MetricsHistory]
) -> Callable[[dict, Any], dict]:
    """The ConsoleFunction's entry point: ``/console/api/`` routes through the guarded
    resolver, every other path as a page file (measured, unguarded)."""
    api = http.lambda_handler(history_app(engine, source))

    @metrics.http_measured
    def page(event: dict, _context: Any) -> dict:
        return page_response(str(event.get("rawPath") or "/"))

    def handle(event: dict, context: Any) -> dict:
        if str(event.get("rawPath") or "").startswith(API_PREFIX):
            return api(event, context)
        return page(event, context)

    return handle
