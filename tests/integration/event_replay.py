"""Replaying sample events through their real handlers on the local stack: ``Replay`` runs one
scenario's events on a fresh topic and namespace (``events-demo`` and ``events-demo-ns``
replaced by unique names; the consumer id a subscribe returned stands for ``demo-consumer-id``)
and checks each ran; ``Reply`` is a handler's answer."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any

from event_scenarios import RATE_KINDS

from magnetar_local.events import LambdaContext
from magnetar_local.sample_events import load_event


@dataclass
class Reply:
    """A handler's payload 2.0 response."""

    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)

    def error(self) -> str:
        """The Pulsar error name of an error reply."""
        return self.json["error"]


@dataclass
class Replay:
    """Runs sample events on one fresh topic through the handlers the template routes them to."""

    stack: Any
    declared: tuple[str, ...]
    topic: str = field(default_factory=lambda: f"events-demo-{uuid.uuid4().hex[:10]}")
    namespace: str = field(default_factory=lambda: f"events-demo-ns-{uuid.uuid4().hex[:10]}")
    tenant: str = field(default_factory=lambda: f"events-demo-tenant-{uuid.uuid4().hex[:10]}")
    create_namespace: bool = True
    """Create ``public/<namespace>`` first (the namespace policy samples need it)."""
    ran: set[str] = field(default_factory=set)
    ledger: str | None = None
    """The topic's ledger, once known: the samples' ids of ledger 1 are aimed at it."""

    def __post_init__(self) -> None:
        if self.create_namespace:
            self.stack.create_namespaces(f"public/{self.namespace}")

    @property
    def full_topic(self) -> str:
        return f"persistent://public/default/{self.topic}"

    def __call__(self, name: str, body: str | None = None, **replacements: str) -> Reply:
        """Replay ``name``; ``body`` replaces the sample's (JSON text) for a bad-input case."""
        assert name in self.declared, f"{name} is not declared for this scenario"
        if self.ledger is not None:
            replacements.setdefault("ledger", self.ledger)
        event = load_event(
            name, topic=self.topic, namespace=self.namespace, tenant=self.tenant, **replacements
        )
        if body is not None:
            event["body"] = body
            event["headers"]["content-length"] = str(len(body.encode()))
        routes = [r for r in self.stack.template.routes if r.route_key == event["routeKey"]]
        assert len(routes) == 1, f"{name}: routeKey {event['routeKey']!r} is not one template route"
        spec = self.stack.template.functions[routes[0].function]
        handler = self.stack.gateway.loader.get(spec.logical_id)
        result = handler(event, LambdaContext(spec.name, spec.memory_mb, spec.timeout_s))
        self.ran.add(name)
        body = result.get("body") or ""
        if result.get("isBase64Encoded"):
            body = base64.b64decode(body).decode()
        headers = {k.lower(): v for k, v in (result.get("headers") or {}).items()}
        return Reply(result["statusCode"], headers, body)

    def assert_ran_everything(self) -> None:
        assert self.ran == set(self.declared)


def sample_body(name: str) -> str:
    return load_event(name)["body"]


def call(url: str, method: str, body: object = None) -> int:
    """Send ``body`` as JSON (none when None) through the local gateway; the status."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def replay_rates(run: Replay, level: str) -> None:
    """Each rate of ``level``: unset (204), set, read back as the sample's body, removed."""
    for kind in RATE_KINDS:
        get = f"admin_get_{level}_{kind}"
        unset = run(get)
        assert (unset.status, unset.text) == (204, ""), kind
        assert run(f"admin_set_{level}_{kind}").status == 204, kind
        rate = run(get)
        sample = json.loads(sample_body(f"admin_set_{level}_{kind}"))
        assert (rate.status, rate.json) == (200, sample), kind
        assert run(f"admin_remove_{level}_{kind}").status == 204, kind
        assert run(get).status == 204, kind
