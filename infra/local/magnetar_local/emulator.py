"""The AWS emulator: moto in server mode, in a child process on a loopback port.

Facts this relies on (DESIGN.md §4, measured on moto 5.2.x): Step Functions executes ASL
only after ``POST /moto-api/config {"stepfunctions": {"execute_state_machine": true}}``,
sent before any state machine exists; its service tasks call ``http://localhost:$MOTO_PORT``;
Wait/Timestamp compares naive local time, hence ``TZ=UTC``. There is no Docker: Lambda is
configured ``use_docker: false``, so an invoke (a workflow's ``lambda:invoke`` task) is
answered by moto's simple Lambda with its own payload, and runs nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REGION = "us-east-1"
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}

# Runs moto's server with its DynamoDB and S3 writes made atomic, as AWS's are (see
# moto_boot), and werkzeug's per-request log lines silenced.
_BOOT = "import sys; from magnetar_local.moto_boot import main; main(sys.argv[1:])"


class EmulatorError(RuntimeError):
    """The emulator did not start or answered unexpectedly."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: have the kernel SIGTERM the emulator if the parent process dies."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Emulator:
    """A moto server child process.

    ``port=0`` picks a free port. ``start`` blocks until the server answers (raises
    EmulatorError after ``timeout_s`` seconds); ``stop`` terminates it and is idempotent.
    With ``data_dir`` its state is kept there (``magnetar_local.durable``): restored before
    it answers, each write on disk before it is answered (``fsync=False``: in the OS, which
    a killed process does not lose); without, it is in memory only.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: Path | None = None,
        fsync: bool = True,
    ) -> None:
        self.host = host
        self.port = port
        self.data_dir = data_dir
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def url(self) -> str:
        """The endpoint URL, e.g. ``http://127.0.0.1:40123`` (AWS_ENDPOINT_URL)."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 30.0) -> Emulator:
        """Start moto, wait until it answers, then enable Step Functions execution."""
        attempts = 1 if self.port else 3  # a picked free port can be taken in between
        for attempt in range(attempts):
            port = self.port or free_port(self.host)
            try:
                self._spawn(port, timeout_s)
                break
            except EmulatorError:
                self.stop()
                if attempt == attempts - 1:
                    raise
        self.port = port
        # Lambda without Docker: moto's simple Lambda answers an invoke with its payload (the
        # local stack runs handlers in-process; a workflow's lambda:invoke task completes)
        self.configure(
            {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
        )
        return self

    def _spawn(self, port: int, timeout_s: float) -> None:
        env = {**os.environ, **FAKE_CREDENTIALS, "TZ": "UTC", "MOTO_PORT": str(port)}
        env.pop("AWS_ENDPOINT_URL", None)
        with tempfile.NamedTemporaryFile(
            prefix="magnetar-moto-", suffix=".log", delete=False
        ) as log:
            self.log_path = Path(log.name)
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _BOOT,
                    *self._durable_args(),
                    "-H",
                    self.host,
                    "-p",
                    str(port),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._answers(port):
                return
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=0.05)  # doubles as the poll interval
            if self.process.returncode is not None:
                raise EmulatorError(
                    f"moto exited with {self.process.returncode}: {self._log_tail()}"
                )
        raise EmulatorError(f"moto did not answer within {timeout_s} s: {self._log_tail()}")

    def _durable_args(self) -> list[str]:
        if self.data_dir is None:
            return []
        return ["--data-dir", str(self.data_dir)] + ([] if self.fsync else ["--no-fsync"])

    def _answers(self, port: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.host}:{port}/moto-api/config", timeout=2):
                return True
        except (OSError, urllib.error.URLError):
            return False

    def configure(self, config: dict) -> dict:
        """POST /moto-api/config and return the emulator's whole config afterwards."""
        request = urllib.request.Request(
            f"{self.url}/moto-api/config",
            data=json.dumps(config).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def _log_tail(self, limit: int = 2000) -> str:
        if self.log_path and self.log_path.exists():
            return self.log_path.read_text(errors="replace")[-limit:]
        return ""

    def stop(self, timeout_s: float = 10.0, at_once: bool = False) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after ``timeout_s``) and remove its log.
        ``at_once``: SIGKILL straight away, for a caller that no longer needs its answers
        (``magnetar local`` stopping). moto's SIGTERM ends the server with ``sys.exit``: it
        collects the whole emulator state (about a second), while its keep-alive connections
        still answer the requests in flight. A kill loses nothing kept: the state is in
        memory only, or journaled before each write is answered (``magnetar_local.durable``
        restores from any point a process ended at)."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            (process.kill if at_once else process.terminate)()
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process is not None:
            atexit.unregister(self.stop)
        if self.log_path is not None:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
            self.log_path = None
