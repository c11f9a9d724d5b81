"""The function runner (``functions/function_runner``): the untrusted side of Pulsar
Functions. It runs user code on the batch the trusted dispatcher sends (definition, code,
records, the token of the function's role) and reaches nothing but the HTTP API
(``MAGNETAR_API_URL``) with that token: no store, no engine, and on AWS a role that may only
write logs.

Each batch runs in a child process forked for it (``run_isolated``) from a zygote that never
saw a batch (``function_zygote``), in a session of its own that is killed when the batch
ends: what one function's code leaves behind (patched modules, threads, processes in its
session) never sees a later batch, and a child's memory holds no earlier batch (another
function's token included), although Lambda reuses the container. The local stack runs the
same code in a subprocess with no AWS credentials (``python -m
magnetar_core.api.function_runner``: one event per stdin line, one answer per stdout line).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from magnetar_core.api import function_zygote
from magnetar_core.api.function_batch import API_URL, BATCH_TIMEOUT_S, RunnerSettings, handle
from magnetar_core.api.function_zygote import Zygote
from magnetar_core.domain.triggers.records import TargetFailed

__all__ = ["API_URL", "BATCH_TIMEOUT_S", "Container", "RunnerSettings", "handle", "main", "run_isolated", "zygote_of"]  # fmt: skip

_zygotes: dict[str, Zygote] = {}
_zygotes_lock = threading.Lock()


def zygote_of(api_url: str) -> Zygote:
    """The zygote serving ``api_url``'s batches (one per URL and process)."""
    with _zygotes_lock:
        return _zygotes.setdefault(api_url, Zygote(api_url))


class Container:
    """One Lambda container of the runner: on its first batch it reads its settings from
    ``environ`` (read once, at the edge, as every handler does) and starts its zygote, a
    fresh interpreter that never sees a batch; later batches reuse both."""

    def __init__(self, environ: Mapping[str, str] = os.environ) -> None:
        self._environ = environ
        self._settings: RunnerSettings | None = None
        self._lock = threading.Lock()

    def settings(self) -> RunnerSettings:
        """The settings, reading them (and starting the zygote) on first use; raises what
        ``RunnerSettings.from_env`` raises for a missing ``MAGNETAR_API_URL``."""
        with self._lock:
            if self._settings is None:
                settings = RunnerSettings.from_env(self._environ)
                function_zygote.undumpable()  # this process holds every batch: no child reads it
                zygote_of(settings.api_url).start()
                self._settings = settings
            return self._settings

    def run(self, event: Mapping[str, Any]) -> dict[str, Any]:
        return run_isolated(event, self.settings())


def run_isolated(event: Mapping[str, Any], settings: RunnerSettings) -> dict[str, Any]:
    """``handle`` in a child forked from the zygote (``function_zygote``), in a session of
    its own killed afterwards (see the module). Raises TargetFailed when the batch failed
    to run, timed out or the child died."""
    event_r, event_w = os.pipe()
    answer_r, answer_w = os.pipe()
    try:
        pid = zygote_of(settings.api_url).spawn(event_r, answer_w)
    except OSError as error:
        for fd in (event_r, event_w, answer_r, answer_w):
            os.close(fd)
        raise TargetFailed(f"Cannot start function {event.get('function')}: {error}") from None
    os.close(event_r)
    os.close(answer_w)
    try:
        with contextlib.suppress(BrokenPipeError), os.fdopen(event_w, "wb") as sink:
            sink.write(json.dumps(event).encode())
        data = _read_all(answer_r, time.monotonic() + settings.batch_timeout_s)
    finally:
        os.close(answer_r)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    if data is None:
        raise TargetFailed(f"Function {event.get('function')} ran longer than {settings.batch_timeout_s:.0f} s")  # fmt: skip
    try:
        outcome = json.loads(data)
    except ValueError:
        raise TargetFailed(f"Function {event.get('function')}'s process died (exit, crash or kill)") from None  # fmt: skip
    if "failed" in outcome:
        raise TargetFailed(str(outcome["failed"]))
    return dict(outcome["answer"])


def _read_all(fd: int, deadline: float) -> bytes | None:
    """The child's answer line (or what came before EOF); None at the deadline. A process
    the child left holding the pipe cannot keep the parent waiting past the answer."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        chunks.append(chunk)
        if not chunk or chunk.endswith(b"\n"):  # the answer is one line; EOF: the child died
            return b"".join(chunks)


def main() -> int:
    """The local stack's runner process: one event per stdin line, run isolated; one
    ``{"answer": ...}`` or ``{"failed": message}`` per stdout line. Logs go to stderr."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    function_zygote.undumpable()  # it holds every batch it was sent: no child may read its memory
    settings = RunnerSettings.from_env(os.environ)
    for line in sys.stdin:
        try:
            outcome: dict[str, Any] = {"answer": run_isolated(json.loads(line), settings)}
        except TargetFailed as error:
            outcome = {"failed": str(error)}
        sys.stdout.write(json.dumps(outcome) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
