"""When the local stack is ready: its gateway answers Pulsar's health check (or, without an
admin handler, accepts connections)."""

from __future__ import annotations

import socket
import ssl
import threading
import time
import urllib.error
import urllib.request

from magnetar_local.auth import LocalAuth
from magnetar_local.gateway import Gateway

HEALTH_PATH = "/admin/v2/brokers/health"


class StackError(RuntimeError):
    """The local stack did not become ready (or is not running)."""


def probe_headers(auth: LocalAuth | None) -> dict[str, str]:
    """The readiness probe's headers: the superuser's token when auth is on (the health
    check is superuser-only, as in Pulsar)."""
    return {} if auth is None else {"Authorization": f"Bearer {auth.token}"}


def await_ready(gateway: Gateway, timeout_s: float, headers: dict[str, str]) -> None:
    """Poll the gateway until ``GET /admin/v2/brokers/health`` answers 200 ``ok`` when the
    admin handler exists, else until it accepts connections; StackError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    use_health = gateway.has_route("GET", HEALTH_PATH)
    last_error = "no attempt"
    pause = threading.Event()  # never set: wait() is the poll interval
    while time.monotonic() < deadline:
        try:
            if not use_health:
                with socket.create_connection((gateway.host, gateway.port), timeout=2):
                    return
            probe = urllib.request.Request(gateway.url + HEALTH_PATH, headers=headers)
            # its own listener: the certificate may name another host than the one bound
            unverified = ssl._create_unverified_context() if gateway.tls is not None else None
            with urllib.request.urlopen(probe, timeout=10, context=unverified) as response:
                body = response.read().decode(errors="replace").strip().strip('"')
                if response.status == 200 and body == "ok":
                    return
                last_error = f"health answered {response.status} {body!r}"
        except (OSError, urllib.error.URLError) as error:
            last_error = str(error)
        pause.wait(0.05)
    raise StackError(f"the gateway was not ready within {timeout_s} s: {last_error}")
