"""This process as the handlers' Lambda container: the local stack's settings in
``os.environ`` and the layers' code on ``sys.path`` (as Lambda puts layers in
``/opt/python``), both undone by ``restore``; and HTTP header blocks parsed without the
``email`` package (``magnetar_local.http_headers``: the same messages, kept after
``restore``)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magnetar_local import http_headers
from magnetar_local.auth import AUTH_OFF, LocalAuth
from magnetar_local.emulator import FAKE_CREDENTIALS
from magnetar_local.handlers import apply_handler_environment
from magnetar_local.template import FunctionSpec, LocalTemplate


@dataclass(frozen=True)
class EngineOverrides:
    """Engine settings ``magnetar local`` sets over the template's (its options; None keeps
    the template's value): ``delayed_delivery_release_grace_ms``, how long past its due time
    a delayed message whose timer was lost waits for the overdue rule to release it
    (``DELAYED_DELIVERY_RELEASE_GRACE_MS``, 30 s in the template); ``consumer_lease_ms``,
    how long a consumer not heard from keeps its messages (``CONSUMER_LEASE_MS``, 60 s; the
    SDK heartbeats every 20 s while its receiver queue is full, so a lease much shorter lets
    such a consumer lapse). Raises ValueError for a negative grace or a lease under 1 ms."""

    delayed_delivery_release_grace_ms: int | None = None
    consumer_lease_ms: int | None = None

    def __post_init__(self) -> None:
        grace, lease = self.delayed_delivery_release_grace_ms, self.consumer_lease_ms
        if grace is not None and grace < 0:
            raise ValueError(f"the delayed delivery release grace must be >= 0 ms, not {grace}")
        if lease is not None and lease < 1:
            raise ValueError(f"the consumer lease must be >= 1 ms, not {lease}")

    def environment(self) -> dict[str, str]:
        """The handlers' variables these overrides set."""
        named = {
            "DELAYED_DELIVERY_RELEASE_GRACE_MS": self.delayed_delivery_release_grace_ms,
            "CONSUMER_LEASE_MS": self.consumer_lease_ms,
        }
        return {name: str(value) for name, value in named.items() if value is not None}


def local_environment(
    aws_endpoint_url: str,
    region: str,
    notify_url: str,
    commit_signal: str,
    auth: LocalAuth | None,
    overrides: EngineOverrides = EngineOverrides(),  # noqa: B008 - frozen, never changed
) -> dict[str, str]:
    """What the local stack adds to the template's environment: the emulator, and the
    local stand-ins for what runs elsewhere on AWS (jobs, functions, wakes, notices)."""
    return {
        **FAKE_CREDENTIALS,
        "AWS_ENDPOINT_URL": aws_endpoint_url,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        # maintenance jobs run as local subprocesses here, not as Glue jobs
        "JOB_LAUNCHER": "local",
        # webhook triggers may call local servers (http://127.0.0.1:...)
        "TRIGGER_PRIVATE_WEBHOOKS": "true",
        # Pulsar Functions run in a runner process here (magnetar_local.function_sandbox)
        "FUNCTION_RUNNER": "",
        # triggers' later work is woken in-process by the trigger driver (moto's Step
        # Functions cannot invoke a Lambda here); the wake workflow is tested on its own
        "TRIGGER_WAKE_STATE_MACHINE_ARN": "",
        # the console's charts read the stack's in-memory minutes (magnetar_local.history)
        "METRICS_HISTORY": "local",
        # the notification channel is served here (magnetar_local.notify): consumers are
        # told its ws:// URL; notices are posted in-process, not through a management API
        "NOTIFY_URL": notify_url,
        "NOTIFY_ENDPOINT": "",
        # long-polls are woken by commits in any container (magnetar_local.commit_signal)
        "COMMIT_SIGNAL": commit_signal,
        **(auth.environment if auth is not None else AUTH_OFF),
        **overrides.environment(),
    }


class HandlerProcess:
    """Changes this process for the handlers, remembering what it changed."""

    def __init__(self) -> None:
        self._saved_environ: dict[str, str | None] = {}
        self._added_paths: list[str] = []

    def enter(self, template: LocalTemplate, extra: dict[str, str]) -> dict[str, str]:
        """The template's handler environment plus ``extra`` into ``os.environ``, and its
        layers' ``python/`` folders onto ``sys.path``; returns the environment set.

        Also installs ``magnetar_local.http_headers`` in this process (idempotent): every
        answer botocore reads from the emulator for the handlers (and the engines of this
        process), and every request the gateway reads, has its header block parsed into the
        same ``HTTPMessage`` without ``email``, a sixth of botocore's client-side CPU per
        call; it stays installed after ``restore`` (it answers as the standard library)."""
        http_headers.install()
        names = {name for spec in template.functions.values() for name in spec.environment}
        self._saved_environ = {name: os.environ.get(name) for name in names | set(extra)}
        environment = apply_handler_environment(template.functions, extra)
        for resource in template.resources.values():
            content = (resource.get("Properties") or {}).get("ContentUri")
            if resource.get("Type") == "AWS::Serverless::LayerVersion" and isinstance(content, str):
                path = str((template.root / content / "python").resolve())
                if Path(path).is_dir() and path not in sys.path:
                    sys.path.append(path)
                    self._added_paths.append(path)
        return environment

    def restore(self) -> None:
        """``os.environ`` and ``sys.path`` as before ``enter`` (idempotent)."""
        for name, value in self._saved_environ.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_environ = {}
        for path in self._added_paths:
            if path in sys.path:
                sys.path.remove(path)
        self._added_paths = []


class SharedClients:
    """The boto3 clients every container of the local gateway builds its engine on
    (``container(spec)``, the loader's ``container_context``): ``(dynamodb, s3,
    stepfunctions)``, made once, from the handlers' settings, when the first container
    builds its engine. A container's own clients cost about 20 ms of CPU to make, and a
    burst of concurrent requests loads a container per request (a hundred producers at once:
    a few hundred containers); on AWS each container is a process of its own, here they are
    threads of one, and boto3 clients are thread-safe."""

    def __init__(self) -> None:
        self._clients: tuple[Any, ...] | None = None
        self._lock = threading.Lock()

    def __call__(self) -> tuple[Any, ...]:
        with self._lock:
            if self._clients is None:
                from magnetar_core.adapters.aws.clients import make_engine_clients
                from magnetar_core.settings import Settings

                self._clients = make_engine_clients(Settings.from_env(os.environ))
            return self._clients

    @contextmanager
    def container(self, spec: FunctionSpec) -> Iterator[None]:
        """Containers loaded within the block build their engines on these clients."""
        from magnetar_core.api.http import shared_clients

        with shared_clients(self):
            yield
