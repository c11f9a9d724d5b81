"""``magnetar status`` and ``magnetar stop``: the local services (``magnetar local``,
``make run``) whose records are in this directory's state folder or a parent's (see
``magnetar.cli.service_url``)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from magnetar.cli.service_url import RunningService, discover, pid_alive, search_folders

STOP_WAIT_S = 30.0


def _here() -> list[RunningService]:
    return discover(os.environ, Path.cwd())


def status() -> int:
    """Print the running services (URL, pid, authentication, where their data is kept,
    record); 0, also when none runs (said so)."""
    services = _here()
    if not services:
        where = search_folders(os.environ, Path.cwd())[0]
        print(f"no running `magnetar local` in {where} or its parent folders")
        return 0
    for service in services:
        auth = "on" if service.auth else "off"
        data = service.data_dir or "in memory"
        print(f"{service.url}  pid {service.pid}  authentication {auth}  data {data}  "
              f"state {service.folder}")  # fmt: skip
    return 0


def stop(pid: int | None = None) -> int:
    """SIGTERM the running services here (only ``pid`` when given); 1 when there was none
    to stop."""
    services = [s for s in _here() if pid is None or s.pid == pid]
    if not services:
        print("no running `magnetar local` to stop here", file=sys.stderr)
        return 1
    for service in services:
        try:
            os.kill(service.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        print(f"stopping {service.url} (pid {service.pid})", flush=True)
    deadline = time.monotonic() + STOP_WAIT_S
    while any(pid_alive(s.pid) for s in services) and time.monotonic() < deadline:
        time.sleep(0.1)  # another process: nothing to wait on but its pid
    running = [s for s in services if pid_alive(s.pid)]
    for service in running:
        print(f"still running after {STOP_WAIT_S:.0f} s: pid {service.pid}", file=sys.stderr)
    return 1 if running else 0
