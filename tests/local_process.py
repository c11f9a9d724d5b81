"""``magnetar local`` as a subprocess for e2e tests that need one of their own (options the
session stack does not have: authentication, TLS, an issuer), in a folder of its own."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from magnetar_wire import tokens

READY_LINE = "Magnetar is running at "


class LocalProcess:
    """``python -m magnetar_local --port 0 *options`` in ``folder`` (``MAGNETAR_HOME`` is
    ``folder/.magnetar``): ``url`` and ``aws`` (its emulator) once it says it runs (within
    ``ready_s``), every output line in ``logs``, ``stop()`` to end it."""

    def __init__(self, folder: Path, *options: str, ready_s: float = 120) -> None:
        self.folder = folder
        env = {**os.environ, "MAGNETAR_HOME": str(folder / ".magnetar")}
        self.process = subprocess.Popen(  # noqa: S603 - our own module
            [sys.executable, "-m", "magnetar_local", "--port", "0", *options],
            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.logs: list[str] = []
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()
        deadline = time.monotonic() + ready_s
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line.startswith(READY_LINE):
                self.url = line.split()[4]
                self.aws = line.split("(AWS emulator at ")[1].split(")")[0]
                break

    def _read(self, lines: queue.Queue[str]) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.logs.append(line)
            lines.put(line)

    def signing_key(self) -> tokens.SigningKey:
        """The secret key a ``--auth`` service made in its folder (it signs its tokens)."""
        return tokens.SigningKey.secret((self.folder / ".magnetar" / "secret.key").read_bytes())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
