"""What every check of ``magnetar verify`` works with: its ``Deadline``, the ``Service``
(plain HTTP to the API, answers as ``Answer``), and the run's ``VerifyContext`` (the SDK
client, the namespace, the run's topic names). A check ends by returning what it saw, or by
raising ``CheckFailed`` (what did not hold) or ``CheckSkipped`` (why it could not run here).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests

Clock = Callable[[], float]
"""Seconds on a monotonic scale (``time.monotonic``)."""
Headers = Callable[[], Mapping[str, str]]
RETRY_STATUSES = (429, 503)
RETRIES = 4
RETRY_PAUSE_S = 0.1


class CheckFailed(Exception):
    """The check saw something that does not hold (the message says what)."""


class CheckSkipped(Exception):
    """The check cannot run against this service (the message says why)."""


class Deadline:
    """The end of a time budget of ``seconds`` from now on ``clock``."""

    def __init__(self, seconds: float, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self.seconds = seconds
        self._end = clock() + seconds

    def remaining_s(self) -> float:
        return max(0.0, self._end - self._clock())

    @property
    def expired(self) -> bool:
        return self.remaining_s() <= 0

    def ms(self, cap_ms: int | None = None) -> int:
        """The ms left (at most ``cap_ms``) for one wait. Raises CheckFailed when none are."""
        left = math.floor(self.remaining_s() * 1000)
        if left <= 0:
            raise CheckFailed(f"ran out of its {self.seconds:g} s")
        return left if cap_ms is None else min(left, cap_ms)


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: its status and decoded JSON body (the text when it is not JSON)."""

    status: int
    body: Any

    @property
    def error(self) -> str | None:
        """Pulsar's error name of an error answer (``{"error": ..., "message": ...}``)."""
        return self.body.get("error") if isinstance(self.body, dict) else None

    def said(self) -> str:
        """``401 AuthenticationError: <message>``, for details and failures."""
        if isinstance(self.body, dict) and "error" in self.body:
            return f"{self.status} {self.body['error']}: {self.body.get('message', '')}"
        return f"{self.status} {str(self.body)[:200]}"


class Service:
    """Plain HTTP to the service at ``url``; every request carries ``headers()`` (the
    credentials) unless a call gives its own. Connection failures raise CheckFailed."""

    def __init__(self, url: str, headers: Headers, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._headers = headers
        self.timeout_s = timeout_s
        self._session = requests.Session()

    def call(self, method: str, path: str, body: Any = None,
             headers: Mapping[str, str] | None = None) -> Answer:  # fmt: skip
        sent = dict(self._headers() if headers is None else headers)
        try:
            resp = self._session.request(method, self.url + path, json=body, headers=sent,
                                         timeout=self.timeout_s)  # fmt: skip
        except requests.RequestException as e:
            raise CheckFailed(f"{method} {path}: no answer from {self.url} ({type(e).__name__}); "
                              "is the service running there? (--service-url, $MAGNETAR_SERVICE_URL)") from None  # fmt: skip
        try:
            decoded: Any = resp.json() if resp.content else None
        except ValueError:
            decoded = resp.text
        return Answer(resp.status_code, decoded)

    def expect(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 204)) -> Any:  # fmt: skip
        """The body of a call that must answer one of ``ok``; else CheckFailed saying what
        came instead. A retryable refusal (``RETRY_STATUSES``: 503 ``ServiceUnitNotReady``,
        an optimistic update that lost a race; 429) is sent again, up to ``RETRIES`` times,
        after ``RETRY_PAUSE_S`` doubling, as the SDK does."""
        answer = self.call(method, path, body)
        pause_s = RETRY_PAUSE_S
        for _ in range(RETRIES):
            if answer.status not in RETRY_STATUSES:
                break
            time.sleep(pause_s)
            pause_s *= 2
            answer = self.call(method, path, body)
        if answer.status not in ok:
            raise CheckFailed(f"{method} {path} answered {answer.said()}")
        return answer.body

    def close(self) -> None:
        self._session.close()


@dataclass(frozen=True)
class WebhookOptions:
    """Where the webhook check serves (``host``, ``port``; 0: a free one) and the URL the
    service calls (``public_url``; None: the server's own, for a service on this machine)."""

    host: str = "127.0.0.1"
    port: int = 0
    public_url: str | None = None


@dataclass(frozen=True)
class VerifyContext:
    """A run: the SDK ``client``, the ``service`` over HTTP, the ``namespace``
    (``tenant/ns``) its topics go to, the ``run_id`` in their names, the headers of a role
    without grants (``denied_headers``; None: not given), the delayed check's ``delay_ms``."""

    client: Any
    service: Service
    namespace: str
    run_id: str
    denied_headers: Mapping[str, str] | None = None
    delay_ms: int = 1500
    webhook: WebhookOptions = WebhookOptions()

    @property
    def topic_prefix(self) -> str:
        return f"persistent://{self.namespace}/verify-{self.run_id}-"

    def topic(self, check: str) -> str:
        """The run's topic of ``check`` (``persistent://<ns>/verify-<run id>-<check>``)."""
        return self.topic_prefix + check

    def admin_path(self, topic: str) -> str:
        """``/admin/v2/persistent/<tenant>/<ns>/<name>`` of a persistent ``topic``."""
        return "/admin/v2/" + "/".join(quote(p, safe="") for p in topic.replace("://", "/").split("/"))  # fmt: skip

    def data_path(self, topic: str) -> str:
        """``/v1/persistent/<tenant>/<ns>/<name>`` (the data plane's routes) of ``topic``."""
        return "/v1/" + "/".join(quote(p, safe="") for p in topic.replace("://", "/").split("/"))

    def namespace_topics_path(self) -> str:
        return f"/admin/v2/namespaces/{self.namespace}/topics"


POLL_S = 0.1
"""How often ``await_backlog`` reads the stats."""


def await_backlog(ctx: VerifyContext, deadline: Deadline, topic: str, subscription: str, backlog: int = 0) -> None:  # fmt: skip
    """Wait until ``subscription``'s ``msgBacklog`` on ``topic`` is ``backlog`` (the service
    took the acknowledgements), reading the stats every ``POLL_S``; CheckFailed when the
    deadline comes first."""
    seen = None
    while not deadline.expired:
        stats = ctx.service.expect("GET", ctx.admin_path(topic) + "/stats", ok=(200,))
        seen = stats.get("subscriptions", {}).get(subscription, {}).get("msgBacklog")
        if seen == backlog:
            return
        time.sleep(POLL_S)
    raise CheckFailed(f"the subscription {subscription} kept a backlog of {seen}, not {backlog}")
