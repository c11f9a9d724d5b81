"""The local stack's function sandbox: user code runs as on AWS, away from the stack.

On AWS a function's batch runs in the function runner Lambda, whose role may only write
logs, and reaches counters, state and topics only through the HTTP API with its role's
token. Here ``SubprocessSandbox`` (a ``ports.FunctionSandbox``) sends each batch to one
runner process (``python -m magnetar_core.api.function_runner``), started on first use with
an environment that carries no AWS credentials, no emulator endpoint and no shared AWS
config (``runner_environment``): only ``MAGNETAR_API_URL``, the gateway. The runner forks a
child per batch, as the Lambda does. Its stderr (user code's logs) goes to the log
``magnetar.function``.

The boundary here is the environment, not the network: the emulator listens on loopback and
accepts any credentials, so code that scans local ports could still reach it. The local
stack is a development tool; on AWS the boundary is IAM.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO

from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed

log = logging.getLogger("magnetar.function")
KEPT = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT", "TMPDIR")
"""The only variables of the stack's environment the runner keeps."""


def runner_environment(api_url: str, paths: list[str], base: Mapping[str, str] = os.environ) -> dict[str, str]:  # fmt: skip
    """The runner's environment: the gateway's URL, the engine's code on ``PYTHONPATH``,
    and no AWS credentials, endpoint, region or config file."""
    env = {name: base[name] for name in KEPT if name in base}
    env.update(
        {
            "MAGNETAR_API_URL": api_url,
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTHONUNBUFFERED": "1",
            # boto3 in user code finds nothing: no shared files, no instance metadata
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    return env


class SubprocessSandbox:
    """Batches run by one runner process (restarted when it dies), one at a time."""

    def __init__(self, api_url: str, paths: list[str], python: str = sys.executable) -> None:
        self._command = [python, "-m", "magnetar_core.api.function_runner"]
        self._env = runner_environment(api_url, paths)
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def run(self, event: Mapping[str, object]) -> TargetAnswer:
        with self._lock:
            process = self._running()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps(event) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
            except OSError as error:
                raise TargetFailed(f"The function runner process failed: {error}") from None
            if not line:
                self._process = None
                raise TargetFailed("The function runner process exited; it restarts on the next batch")  # fmt: skip
        outcome = json.loads(line)
        if "failed" in outcome:
            raise TargetFailed(str(outcome["failed"]))
        return TargetAnswer(200, json.dumps(outcome["answer"]).encode())

    def _running(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(  # noqa: S603 - our own module, no shell
                self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=self._env, text=True, bufsize=1,
            )  # fmt: skip
            assert self._process.stderr is not None
            threading.Thread(target=_forward, args=(self._process.stderr,), daemon=True,
                             name="function-runner-log").start()  # fmt: skip
        return self._process

    def close(self) -> None:
        """Stop the runner process (the stack stopping)."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()


def _forward(stream: IO[str]) -> None:
    for line in stream:
        log.info("%s", line.rstrip())
