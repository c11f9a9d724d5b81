"""Producer registration (docs/http-api/producing.md, "Create a producer"): access modes, epochs,
``lastSequenceId``, ``maxMessageSize``, heartbeats of exclusive leases, release on close.

A partitioned topic registers one producer per partition under one name: the first
partition's registration names it (server-assigned when not given), the others reuse it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from magnetar import exceptions as exc

if TYPE_CHECKING:
    from magnetar._transport.http import Transport

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "WAIT_MS", "Heartbeat", "Lease", "Registration",
           "SwitchFollower", "declared_schema", "register_all", "release_all"]  # fmt: skip

WAIT_MS = 20_000  # the longest WaitForExclusive long poll the contract allows
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
DEFAULT_LEASE_MS = 30_000


@dataclass
class Lease:
    """The producer's registration on one topic or partition."""

    base: str  # /v1/{domain}/{tenant}/{namespace}/{topic}
    epoch: int | None


@dataclass
class Registration:
    """What ``create_producer`` learned from the service."""

    name: str
    leases: list[Lease]
    last_sequence_id: int
    max_message_size: int
    lease_ms: int
    schema_version: int | None = None


def declared_schema(schema: Any) -> dict | None:
    """The ``schema`` body field that declares ``schema`` (a ``magnetar.schema.Schema``) to
    the registry: its ``SchemaInfo.to_dict()``; None for bytes (the default: nothing to
    declare) and for AUTO_CONSUME."""
    info = schema.schema_info() if schema is not None else None
    if info is None or info.schema_type().name in ("BYTES", "NONE", "AUTO_CONSUME", "AUTO_PUBLISH"):
        return None
    return dict(info.to_dict())


def _register(t: Transport, base: str, body: dict, stop: threading.Event) -> dict:
    wait = body["accessMode"] == "WaitForExclusive"
    while True:
        try:
            resp = t.call("POST", f"{base}/producers", json_body=body,
                          timeout=WAIT_MS / 1000 + t.operation_timeout if wait else None)  # fmt: skip
        except exc.ProducerBusy:
            if not wait or stop.is_set():
                raise
            continue  # WaitForExclusive: the holder is still there; ask again (blocking create)
        if not isinstance(resp, dict) or not isinstance(resp.get("producerName"), str):
            raise exc.UnknownError(f"unexpected create-producer response: {resp!r}")
        return resp


def _int(resp: dict, key: str, default: int) -> int:
    value = resp.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def register_all(t: Transport, bases: list[str], name: str | None, access_mode: str,
                 stop: threading.Event, log: logging.Logger,
                 schema: dict | None = None) -> Registration:  # fmt: skip
    """Register on every topic / partition in ``bases``, declaring ``schema`` (a
    ``declared_schema`` body, None: none); on failure release what was taken.

    Raises:
        ProducerFenced: an exclusive producer holds the topic (Exclusive, Shared).
        IncompatibleSchema: the topic's registry refused ``schema``.
        PulsarException: any other error of the service.
    """
    leases: list[Lease] = []
    last, max_size, lease_ms = -1, DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_LEASE_MS
    version: int | None = None
    try:
        for i, base in enumerate(bases):
            body: dict[str, Any] = {"accessMode": access_mode}
            if name:
                body["producerName"] = name
            if access_mode == "WaitForExclusive":
                body["waitMs"] = WAIT_MS
            if schema is not None:
                body["schema"] = schema
            resp = _register(t, base, body, stop)
            name = resp["producerName"]
            epoch = resp.get("epoch")
            leases.append(Lease(base, epoch if isinstance(epoch, int) else None))
            last = max(last, _int(resp, "lastSequenceId", -1))
            size = _int(resp, "maxMessageSize", DEFAULT_MAX_MESSAGE_SIZE)
            max_size = size if i == 0 else min(max_size, size)
            lease_ms = _int(resp, "leaseMs", DEFAULT_LEASE_MS) if i == 0 else lease_ms
            version = _int(resp, "schemaVersion", -1) if i == 0 else version
    except BaseException:
        if name:
            release_all(t, name, leases, log)
        raise
    assert name is not None
    return Registration(name, leases, last, max_size, lease_ms,
                        version if version is not None and version >= 0 else None)  # fmt: skip


def release_all(t: Transport, name: str, leases: list[Lease], log: logging.Logger) -> None:
    """``DELETE .../producers/{name}?epoch=N`` on every lease (best effort, idempotent)."""
    for lease in leases:
        query = f"?epoch={lease.epoch}" if lease.epoch is not None else ""
        try:
            t.call("DELETE", f"{lease.base}/producers/{quote(name, safe='')}{query}")
        except exc.PulsarException as e:
            log.warning("releasing producer %s on %s: %s", name, lease.base, e)


class SwitchFollower:
    """Registers a producer again when the client switched deployments since it registered
    (cluster failover): there, under the same name, with ``reregister`` (None: never), before
    its next commit or heartbeat. The new epochs are set on the registration's leases in
    place (the heartbeat iterates them), with the new schema version."""

    def __init__(self, t: Transport, reg: Registration,
                 reregister: Callable[[list[str], str], Registration] | None,
                 log: logging.Logger) -> None:  # fmt: skip
        self._t, self._reg, self._reregister, self._log = t, reg, reregister, log
        self._lock = threading.Lock()
        self._generation = t.generation  # the deployment the leases are on

    def __call__(self) -> None:
        """Register again if the client switched; raises what the registration raises (a
        retryable error is retried by the caller)."""
        with self._lock:
            generation = self._t.generation
            if generation == self._generation or self._reregister is None:
                return
            reg = self._reregister([lease.base for lease in self._reg.leases], self._reg.name)
            for lease, new in zip(self._reg.leases, reg.leases, strict=True):
                lease.epoch = new.epoch  # in place: the heartbeat iterates these leases
            self._reg.schema_version = reg.schema_version
            self._generation = generation
            self._log.info("producer %s registered again on %s", self._reg.name, self._t.base_url)


class Heartbeat:
    """Renews exclusive leases every ``lease_ms / 3`` on a daemon thread; ``on_fenced`` runs
    (once) when the service answers ``ProducerFenced``; ``before_beat`` runs before each
    round. ``stop()`` joins the thread."""

    def __init__(self, t: Transport, name: str, leases: list[Lease], lease_ms: int,
                 on_fenced: Callable[[exc.ProducerFenced], None], log: logging.Logger,
                 before_beat: Callable[[], None] | None = None) -> None:  # fmt: skip
        self._t, self._name, self._leases = t, name, leases
        self._before_beat = before_beat
        self._interval = max(lease_ms, 30) / 3000
        self._on_fenced = on_fenced
        self._log = log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"magnetar-heartbeat-{name}")  # fmt: skip
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            if self._before_beat is not None:
                try:
                    self._before_beat()  # registered again after a cluster switch
                except exc.ProducerFenced as e:
                    self._on_fenced(e)
                    return
                except exc.PulsarException as e:
                    self._log.warning("registering producer %s again failed: %s", self._name, e)
                    continue
            for lease in self._leases:
                path = f"{lease.base}/producers/{quote(self._name, safe='')}/heartbeat"
                try:
                    self._t.call("POST", f"{path}?epoch={lease.epoch}", json_body={},
                                 timeout=self._interval)  # fmt: skip
                except exc.ProducerFenced as e:
                    self._on_fenced(e)
                    return
                except exc.PulsarException as e:  # the next beat may get through
                    self._log.warning("heartbeat of producer %s failed: %s", self._name, e)

    def stop(self) -> None:
        """Stop renewing and join the thread."""
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join()
