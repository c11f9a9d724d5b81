"""The trigger check of ``magnetar verify``: a small HTTP server of its own (``WebhookServer``)
receives a trigger's POST; the check creates a webhook trigger on a topic, produces one
message, and waits for the call carrying it, signed with the trigger's secret.

Skipped, with the reason, when the service cannot call this machine: a service that is not
on this machine (a Lambda cannot reach a laptop; ``--webhook-url`` gives a public URL that
forwards to the server, e.g. a tunnel), or one that refuses private webhook addresses
(``TRIGGER_PRIVATE_WEBHOOKS`` off, as on AWS by default).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import queue
import secrets
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

from magnetar.cli.verify.context import (
    CheckFailed,
    CheckSkipped,
    Deadline,
    VerifyContext,
    await_backlog,
)

TRIGGER = "verify"
PATH = "/magnetar-verify"


@dataclass(frozen=True)
class Call:
    """One POST the server received: its headers (names lower-case) and body bytes."""

    headers: dict[str, str]
    body: bytes


class WebhookServer:
    """Answers every POST with 200 ``{}`` and queues it as a ``Call``; ``url`` after
    ``start``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        calls: queue.Queue[Call] = queue.Queue()
        self.calls = calls
        self._host = f"[{host}]" if ":" in host else host

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                calls.put(Call({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet: the report says what came."""

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> WebhookServer:
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self._server.server_address[1]}{PATH}"

    def next_call(self, timeout_s: float) -> Call | None:
        try:
            return self.calls.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def on_this_machine(url: str) -> bool:
    """Whether ``url``'s host is a loopback name or address."""
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def signed(secret: str, call: Call) -> bool:
    """Whether ``call`` carries the trigger's signature (docs/http-api/triggers.md, "Webhook
    signature")."""
    timestamp = call.headers.get("x-magnetar-timestamp", "")
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + call.body, hashlib.sha256)
    return hmac.compare_digest("sha256=" + mac.hexdigest(), call.headers.get("x-magnetar-signature", ""))  # fmt: skip


def trigger_webhook(ctx: VerifyContext, deadline: Deadline) -> str:
    options = ctx.webhook
    if options.public_url is None and not on_this_machine(ctx.service.url):
        raise CheckSkipped(f"the service at {ctx.service.url} is not on this machine and cannot call "
                           "a server here; give --webhook-url (a public URL forwarding to --webhook-port)")  # fmt: skip
    server = WebhookServer(options.host, options.port).start()
    try:
        return _deliver(ctx, deadline, server, options.public_url or server.url)
    finally:
        server.stop()


def _deliver(ctx: VerifyContext, deadline: Deadline, server: WebhookServer, url: str) -> str:
    topic = ctx.topic("trigger")
    path = ctx.admin_path(topic)
    ctx.service.expect("PUT", path)
    secret = secrets.token_hex(16)
    body = {"target": {"type": "webhook", "url": url, "secret": secret},
            "subscriptionType": "Shared", "initialPosition": "Earliest"}  # fmt: skip
    created = ctx.service.call("PUT", f"{path}/triggers/{TRIGGER}", body)
    if created.status == 400 and "target.url" in str(created.body):
        raise CheckSkipped(f"the service refuses a webhook to {url} ({created.said()}); a deployment "
                           "allows private addresses with TRIGGER_PRIVATE_WEBHOOKS=true")  # fmt: skip
    if created.status != 200:
        raise CheckFailed(f"creating the trigger answered {created.said()}")
    producer = ctx.client.create_producer(topic)
    try:
        sent = producer.send(b"to-the-webhook", properties={"verify": ctx.run_id})
    finally:
        producer.close()
    try:
        call = server.next_call(deadline.remaining_s())
        if call is None:
            raise CheckFailed(f"no call reached {url} within the check's bound of {deadline.seconds:g} s")  # fmt: skip
        if not signed(secret, call):
            raise CheckFailed("the webhook call's X-Magnetar-Signature does not match the trigger's secret")  # fmt: skip
        records = json.loads(call.body).get("records", [])
        payloads = [base64.b64decode(r.get("payload", "")) for r in records]
        if payloads != [b"to-the-webhook"] or records[0].get("topic") != topic:
            raise CheckFailed(f"the webhook got {len(records)} records: {payloads} of {[r.get('topic') for r in records]}")  # fmt: skip
        await_backlog(ctx, deadline, topic, TRIGGER)  # its 200 acknowledged the message
    except CheckFailed:
        ctx.service.call("DELETE", f"{path}/triggers/{TRIGGER}")  # best effort: cleanup follows
        raise
    ctx.service.expect("DELETE", f"{path}/triggers/{TRIGGER}")
    return f"trigger called {url} with message {sent}, signed with its secret; its 200 acknowledged it (backlog 0)"
