"""Local trigger driving: a commit on a topic wakes its triggers, in-process.

On AWS a commit reaches the triggers of its topic through the index table's stream (issue
13, later slice); here the gateway tells ``TriggerDriver`` about every answered request
(``Gateway.observers``): a produce (``POST /v1/.../messages``) on a topic with triggers, or
a trigger's ``PUT``, wakes that topic. One daemon thread then runs ``deliver_once`` on each
of the topic's triggers until a step makes no progress (nothing acknowledged, nothing
filtered). The topic is woken again without a produce when its steps say work is due
(``DeliveryOutcome.due_ms``): a retry after a backoff (the timers release it then), or the
end of a batching window; a retry that is due at once (no backoff) or overdue (its timer
has not released it yet) is stepped again ``retry_every_ms`` later. Topics without
triggers cost no AWS request: the driver knows which topics have triggers from the trigger
routes it sees, and, on a stack restored from its data directory, from the triggers stored
(``topics_with_triggers``, read once at start: ``resume``).

``load_function("NAME=path/file.py:handler")`` loads a handler for ``magnetar local
--function``.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from magnetar_core.adapters.targets.local import Handler
from magnetar_core.engine import Engine
from magnetar_local.routes import RouteMatch
from magnetar_wire.names import TopicName

log = logging.getLogger(__name__)
PRODUCE = ("POST", "/v1/{domain}/{tenant}/{namespace}/{topic}/messages")
TRIGGER = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}/triggers/{name}"
MAX_STEPS = 1000
"""Steps per wake of one trigger (a bound, not a budget: a step moves at least one message).
A trigger still progressing after them makes its topic due again at once."""


def load_function(text: str) -> tuple[str, Handler]:
    """``NAME=path/to/file.py:handler`` -> ``(NAME, handler)``, the file imported now.
    Raises ValueError naming what is wrong (the form, a missing file or handler)."""
    name, _, where = text.partition("=")
    path, _, attribute = where.rpartition(":")
    if not name or not path or not attribute:
        raise ValueError(f"--function takes NAME=path/to/file.py:handler, not {text!r}")
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"--function {name}: no file {path}")
    spec = importlib.util.spec_from_file_location(f"magnetar_function_{name}", file)
    if spec is None or spec.loader is None:
        raise ValueError(f"--function {name}: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler = getattr(module, attribute, None)
    if not callable(handler):
        raise ValueError(f"--function {name}: {path} has no function {attribute!r}")
    return name, handler


def _topic(params: dict[str, str]) -> TopicName:
    return TopicName.of(params["domain"], params["tenant"], params["namespace"], params["topic"])


class TriggerDriver:
    """Runs triggers' delivery steps when their topic gets a commit (see the module)."""

    def __init__(self, engine: Engine, retry_every_ms: int = 200) -> None:
        self.engine = engine
        self.retry_every_ms = retry_every_ms
        self._lock = threading.Condition()
        self._woken: set[str] = set()
        self._retry_at: dict[str, float] = {}
        self._with_triggers: set[str] = set()
        self._stopped = False
        self._paused = 0
        self._busy = False
        self._thread: threading.Thread | None = None

    # -- what the gateway tells ----------------------------------------------------------

    def observe(self, match: RouteMatch, status: int) -> None:
        """A gateway observer: wake the topic of a successful produce or trigger PUT."""
        route, params = match.route, match.path_parameters
        if not 200 <= status < 300:
            return
        if (route.method, route.path) == PRODUCE:
            topic = str(_topic(params).base)
            if topic in self._with_triggers:
                self.wake(topic)
        elif route.path == TRIGGER and route.method == "PUT":
            topic = str(_topic(params))
            self._with_triggers.add(topic)
            self.wake(topic)

    def wake_known(self, topic: str) -> None:
        """Wake ``topic`` when this driver knows it has triggers (a handler's wake, through
        ``commit_signal.WAKES``)."""
        if topic in self._with_triggers:
            self.wake(topic)

    def resume(self, topics: set[str]) -> None:
        """Take over ``topics`` (base topics' full names) as having triggers and run them
        soon: the triggers a durable stack restored, whose routes this driver never saw
        (their backlog left before the stop is delivered without waiting for a produce)."""
        with self._lock:
            self._with_triggers |= topics
            self._woken |= topics
            self._lock.notify_all()

    def wake(self, topic: str) -> None:
        """Run the triggers of ``topic`` (a base topic's full name) soon."""
        with self._lock:
            self._woken.add(topic)
            self._lock.notify_all()

    def idle(self) -> bool:
        """Whether the driver waits for a wake with nothing to do: no step under way, no
        topic woken, no retry pending (it then makes no request until the next wake)."""
        with self._lock:
            return not (self._busy or self._woken or self._retry_at)

    # -- the thread ----------------------------------------------------------------------

    def start(self) -> TriggerDriver:
        self._thread = threading.Thread(target=self._run, name="trigger-driver", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No delivery step runs inside (one under way finishes first): the stored state
        holds still for a test that reads it back around its requests. Wakes and retries
        are kept and run afterwards."""
        with self._lock:
            self._paused += 1
            while self._busy:
                self._lock.wait()
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1
                self._lock.notify_all()

    def _next(self) -> str | None:
        """The next topic to run (None: stopped), waiting for a wake or a due retry, and
        while paused; marks the driver busy."""
        with self._lock:
            self._busy = False
            self._lock.notify_all()
            while not self._stopped:
                if self._paused:
                    self._lock.wait()
                    continue
                now = time.monotonic()
                for topic, at in list(self._retry_at.items()):
                    if at <= now:
                        del self._retry_at[topic]
                        self._woken.add(topic)
                if self._woken:
                    self._busy = True
                    return self._woken.pop()
                due = min(self._retry_at.values(), default=None)
                self._lock.wait(None if due is None else max(0.0, due - now))
            return None

    def _run(self) -> None:
        while (topic := self._next()) is not None:
            try:
                again_ms = self.run_topic(TopicName.parse(topic))
            except Exception:  # a fault (the emulator stopping, a bug): logged, not fatal
                log.exception("triggers of %s failed", topic)
                again_ms = None
            if again_ms is not None:
                with self._lock:
                    self._retry_at[topic] = time.monotonic() + again_ms / 1000

    def run_topic(self, topic: TopicName) -> int | None:
        """Step each trigger of ``topic`` until it makes no progress (at most ``MAX_STEPS``
        steps each); returns in how many ms the topic has work again without a produce
        (None: not before a produce; 0: a trigger was still progressing at its last step)."""
        again: list[int] = []
        for trigger in self.engine.triggers.of_topic(topic):
            for _ in range(MAX_STEPS):
                outcome = self.engine.delivery.deliver_once(trigger)
                if outcome.due_ms is not None or outcome.retried:
                    again.append(self._wait_ms(outcome.due_ms))
                if outcome.last_of_wake:
                    break
            else:
                again.append(0)
        return min(again, default=None)

    def _wait_ms(self, due_ms: int | None) -> int:
        """How long to wait for work due at ``due_ms`` (epoch ms of the engine's clock;
        None or past: ``retry_every_ms``, a retry waiting for its release)."""
        if due_ms is None:
            return self.retry_every_ms
        wait_ms = due_ms - self.engine.runtime.now_ms()
        return wait_ms if wait_ms > 0 else self.retry_every_ms


def topics_with_triggers(dynamodb: object, table: str) -> set[str]:
    """The full names of the topics that have triggers (Pulsar Functions' included) in the
    topics table ``table``: one Scan, paged, for the trigger items (``pk`` the namespace,
    ``name`` ``$trigger/<topic>/<trigger>``). For a restored local stack only: on AWS the
    log table's stream reaches the triggers."""
    from magnetar_core.adapters.aws.triggers import PREFIX

    paginator = dynamodb.get_paginator("scan")  # type: ignore[attr-defined]
    pages = paginator.paginate(
        TableName=table,
        FilterExpression="begins_with(#n, :prefix)",
        ProjectionExpression="pk, #n",
        ExpressionAttributeNames={"#n": "name"},
        ExpressionAttributeValues={":prefix": {"S": PREFIX}},
    )
    found = set()
    for page in pages:
        for item in page["Items"]:
            local = item["name"]["S"][len(PREFIX) :].split("/")[0]
            found.add(str(TopicName.parse(f"{item['pk']['S']}/{local}")))
    return found
