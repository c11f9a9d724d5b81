"""The function runner (``functions/function_runner``): the untrusted side of Pulsar
Functions. It runs user code on the batch the trusted dispatcher sends (definition, code,
records, the token of the function's role) and reaches nothing but the HTTP API
(``MAGNETAR_API_URL``) with that token: no store, no engine, and on AWS a role that may only
write logs.

Each batch runs in a child process forked for it (``run_isolated``), in a session of its
own that is killed when the batch ends: what one function's code leaves behind (patched
modules, threads, processes in its session) never sees a later batch, another function's
token included, although Lambda reuses the container. The local stack runs the same code in
a subprocess with no AWS credentials (``python -m magnetar_core.api.function_runner``: one
event per stdin line, one answer per stdout line).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from magnetar_core.adapters.http.function_api import FunctionApi
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.records import TargetFailed
from magnetar_core.services.functions.runtime import FunctionRuntime

API_URL = "MAGNETAR_API_URL"
BATCH_TIMEOUT_S = 55.0
"""A batch's time: under the runner Lambda's 60 s timeout."""


@dataclass(frozen=True)
class RunnerSettings:
    """The runner's settings: the HTTP API's base URL, a batch's time."""

    api_url: str
    batch_timeout_s: float = BATCH_TIMEOUT_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RunnerSettings:
        url = env.get(API_URL, "")
        if not url.startswith(("https://", "http://")):
            raise TargetFailed(f"{API_URL} must be the HTTP API's base URL, not {url!r}")
        return cls(url)


_runtime = FunctionRuntime(Runtime().now_ms)


def handle(event: Mapping[str, Any], settings: RunnerSettings) -> dict[str, Any]:
    """Run the batch ``event`` (``runtime.batch_event``) in this process; its
    ``batchItemFailures``. Raises TargetFailed when the batch is not one or its function
    does not load."""
    api = FunctionApi(settings.api_url, str(event.get("function", "")), event.get("token"))
    return _runtime.run(event, api, api)


def run_isolated(event: Mapping[str, Any], settings: RunnerSettings) -> dict[str, Any]:
    """``handle`` in a forked child, in a session of its own killed afterwards (see the
    module). Raises TargetFailed when the batch failed to run, timed out or the child died."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: user code runs here, and nowhere else
        os.close(read_end)
        _child(event, settings, write_end)
    os.close(write_end)
    try:
        data = _read_all(read_end, time.monotonic() + settings.batch_timeout_s)
    finally:
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    if data is None:
        raise TargetFailed(f"Function {event.get('function')} ran longer than {settings.batch_timeout_s:.0f} s")  # fmt: skip
    try:
        outcome = json.loads(data)
    except ValueError:
        raise TargetFailed(f"Function {event.get('function')}'s process died (exit, crash or kill)") from None  # fmt: skip
    if "failed" in outcome:
        raise TargetFailed(str(outcome["failed"]))
    return dict(outcome["answer"])


def _child(event: Mapping[str, Any], settings: RunnerSettings, write_end: int) -> None:
    os.setsid()
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # never the runner's next events
    os.dup2(2, 1)  # user code's prints go to the log, never into the answer
    try:
        outcome: dict[str, Any] = {"answer": handle(event, settings)}
    except TargetFailed as error:
        outcome = {"failed": str(error)}
    except BaseException as error:  # noqa: BLE001 - whatever user code raised at load time
        outcome = {"failed": f"Function {event.get('function')} failed: {error!r}"}
    with contextlib.suppress(OSError):
        os.write(write_end, json.dumps(outcome).encode() + b"\n")
    os._exit(0)


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
