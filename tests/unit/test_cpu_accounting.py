"""The per-test CPU accounting (tests/cpu_accounting.py) on real processes: the CPU of a
worker the kernel reaps (its parent ignores SIGCHLD, as pyspark's daemon does) stays counted
after the worker exits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from cpu_accounting import ProcessTree

# A parent that ignores SIGCHLD forks a worker that spins for a while, says so, and exits
# once told; the parent stays until its stdin closes.
PARENT = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        print("spun", flush=True)
        os.read(go_r, 1)
        os._exit(0)
    sys.stdin.readline()  # "exit": let the worker go
    os.write(go_w, b"x")
    sys.stdin.readline()  # then stay until stdin closes
    """
)


def test_a_worker_reaped_by_the_kernel_keeps_the_cpu_it_was_seen_with():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None and parent.stdin is not None
        assert parent.stdout.readline().strip() == "spun"
        tree = ProcessTree()
        seen = tree.cpu()  # the worker is live: its 0.3 s counted
        worker = next(p for p, (ppid, _, _) in tree.known.items() if ppid == parent.pid)
        parent.stdin.write("exit\n")
        parent.stdin.flush()
        deadline = time.monotonic() + 10
        while worker in tree.known and time.monotonic() < deadline:
            time.sleep(0.02)
            after = tree.cpu()
        assert worker not in tree.known  # gone, reaped by the kernel
        assert after >= seen - 0.05  # its CPU did not drop out
        assert tree.lost >= 0.25
    finally:
        parent.kill()
        parent.wait()
