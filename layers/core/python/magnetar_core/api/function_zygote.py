"""The function runner's zygote: the process every batch's child is forked from.

A child forked from the runner itself would start with a copy of the runner's memory, where
earlier batches (other functions' tokens among them) may linger in freed buffers. The zygote
is a fresh interpreter (``python -m magnetar_core.api.function_zygote``, started by the
runner, never a fork of it) that never reads a batch: the runner sends it, over a Unix
socket, only two pipe descriptors; the zygote forks a child that reads the batch from the
first, runs it (``function_batch.handle``) and writes the answer to the second, and tells
the runner the child's pid (its session is killed when the batch ends). A child therefore
holds its own batch and nothing else, and may start neither processes nor threads
(``no_new_tasks``), so nothing of it outlives its batch. The zygote and the runner make themselves
non-dumpable (``PR_SET_DUMPABLE`` 0), so a child cannot read their memory through
``/proc`` or ``ptrace``, though it runs as the same user.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import threading

PR_SET_DUMPABLE = 4


def undumpable() -> None:
    """Make this process non-dumpable: other processes of its user cannot attach to it or
    read its ``/proc`` memory (Linux; elsewhere nothing happens)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def no_new_tasks() -> None:
    """Forbid this process to start processes or threads (``RLIMIT_NPROC`` 0: Linux counts
    both against the user): nothing of a batch can outlive its session, nor wait in the
    container for a later invocation. Not enforced for root (a development machine's
    container may run as root; Lambda does not)."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


class Zygote:
    """A zygote process serving ``api_url``'s batches, started on first use and again when
    it died."""

    def __init__(self, api_url: str) -> None:
        self._api_url = api_url
        self._sock: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the zygote now (its imports overlap the caller's own start)."""
        with self._lock:
            self._running()

    def spawn(self, event_fd: int, answer_fd: int) -> int:
        """Fork a child reading its batch from ``event_fd`` and answering on
        ``answer_fd``; its pid. Raises OSError when the zygote cannot be reached."""
        with self._lock:
            for attempt in (1, 2):
                sock = self._running()
                try:
                    socket.send_fds(sock, [b"f"], [event_fd, answer_fd])
                    line = _read_line(sock)
                except OSError:
                    line = b""
                if line:
                    return int(line)
                self._stop()  # died (or was killed): a new one, once
                if attempt == 2:
                    raise OSError("the function runner's zygote does not answer")
            raise AssertionError("unreachable")

    def _running(self) -> socket.socket:
        if self._sock is None or self._process is None or self._process.poll() is not None:
            self._stop()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            command = [sys.executable, "-m", __name__, str(theirs.fileno()), self._api_url]
            self._process = subprocess.Popen(  # noqa: S603 - our own module, no shell
                command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL
            )
            theirs.close()
            self._sock = ours
        return self._sock

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._sock, self._process = None, None


def _read_line(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(64)
        if not chunk:
            return b""
        data += chunk
    return data.strip()


def serve(sock: socket.socket, api_url: str) -> None:
    """The zygote's loop: a child per request, until the runner closes the socket."""
    undumpable()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    while True:
        message, fds, _, _ = socket.recv_fds(sock, 16, 2)
        if not message or len(fds) != 2:
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            sock.close()
            _child(fds[0], fds[1], api_url)
        for fd in fds:
            os.close(fd)
        sock.sendall(b"%d\n" % pid)


def _child(event_fd: int, answer_fd: int, api_url: str) -> None:
    """Read the batch, run it, answer one line, exit."""
    from magnetar_core.api import function_batch
    from magnetar_core.domain.triggers.records import TargetFailed

    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # user code may wait for its processes
    with os.fdopen(event_fd, "rb") as source:
        event = json.loads(source.read())
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # user code's prints go to the log, never into the answer
    no_new_tasks()
    settings = function_batch.RunnerSettings(api_url)
    try:
        outcome: dict = {"answer": function_batch.handle(event, settings)}
    except TargetFailed as error:
        outcome = {"failed": str(error)}
    except BaseException as error:  # noqa: BLE001 - whatever user code raised at load time
        outcome = {"failed": f"Function {event.get('function')} failed: {error!r}"}
    with contextlib.suppress(OSError):
        os.write(answer_fd, json.dumps(outcome).encode() + b"\n")
    os._exit(0)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    # imported once here, so every child starts with the runner's code and the Functions
    # API (``import magnetar``: the SDK where installed) loaded
    import magnetar_core.api.function_batch  # noqa: F401
    from magnetar_core.services.functions.loader import ensure_functions_api

    ensure_functions_api()

    serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2])
