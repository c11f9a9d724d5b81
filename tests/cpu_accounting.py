"""Per-test CPU accounting, opt-in: ``MAGNETAR_TEST_CPU=<file>`` (tests/conftest.py loads it).

Each process of the run (every xdist worker, or the single pytest process) appends one JSON
line per test to ``<file>``: the test's node id, its ``phase`` (``test``; ``collection`` for
the process's start-up and collection, ``teardown`` for what the session's fixtures pay when
the run ends) and ``cpu``, the CPU-seconds spent meanwhile by the process and every process
it started. Wall-clock numbers on a shared machine are noise; CPU-seconds are not.

The CPU of a process tree, read from /proc (``ProcessTree``): the process's own user+system
time and that of the children it waited for (``cutime``/``cstime``), plus, for each live
descendant (a ``magnetar local`` subprocess, Spark's JVM and its Python workers), the same
four fields. A process is counted once: live in its own line, or, once waited for, in its
parent's; one that nobody counted reaps (orphaned, or its parent gone too) keeps the CPU it
was last seen with. What reading /proc costs is left out.

Summarise with ``python tests/cpu_accounting.py <file>`` (per lane and per file).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ENV = "MAGNETAR_TEST_CPU"
TICKS = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, int, float]]:
    """Every process: pid -> (parent pid, start time, CPU-s of it and its waited-for
    children)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
        # fields[1]: ppid; [11:15]: utime, stime, cutime, cstime; [19]: starttime
        cpu = sum(int(f) for f in fields[11:15]) / TICKS
        found[int(entry.name)] = (int(fields[1]), int(fields[19]), cpu)
    return found


def _ignores_children(pid: int) -> bool:
    """Whether process ``pid`` ignores SIGCHLD (its children's CPU never reaches its
    ``cutime``: nobody waits for them)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(
        (line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), "0"
    )
    return bool(int(mask, 16) & (1 << (signal.SIGCHLD - 1)))


class ProcessTree:
    """The CPU-seconds a process and every process it started have spent so far.

    A descendant is counted live in its own line until it is gone; then its parent's
    ``cutime`` holds it (the parent waited for it), or its parent's parent's when the parent
    is gone too, and so on up to a process still counted. One that was orphaned (reparented
    to init) keeps the CPU it was last seen with, and so does one whose parent ignores
    SIGCHLD (pyspark's worker daemon: the kernel reaps its workers, whose CPU then reaches
    nobody's ``cutime``). Descendants are remembered, so one reparented to init still counts;
    one orphaned before it was first seen is missed."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self.known: dict[int, tuple[int, int, float]] = {}  # pid -> (ppid, start, cpu)
        self.lost = 0.0
        self.parents: dict[int, bool] = {}  # pid of a parent -> whether it ignores SIGCHLD

    def cpu(self) -> float:
        procs = _processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        alive_known = [p for p, k in self.known.items() if p in procs and procs[p][1] == k[1]]
        tree, todo = set(), [self.root, *alive_known]
        while todo:
            pid = todo.pop()
            if pid not in tree:
                tree.add(pid)
                todo += children.get(pid, [])
        for pid, (ppid, _, cpu) in self.known.items():
            if pid in alive_known:
                continue
            if self.parents.get(ppid):  # the kernel reaped it: in nobody's cutime
                self.lost += cpu
                continue
            while ppid in self.known and ppid not in alive_known:  # a parent gone too:
                ppid = self.known[ppid][0]  # it was charged, and charged its own parent
            if ppid not in tree:
                self.lost += cpu  # orphaned: nobody counted here is charged with it
        tree.discard(self.root)
        self.known = {pid: procs[pid] for pid in tree if pid in procs}
        for pid in {ppid for ppid, _, _ in self.known.values()} - self.parents.keys():
            self.parents[pid] = _ignores_children(pid)  # a parent seen with its children
        own = procs[self.root][2] if self.root in procs else time.process_time()
        return own + sum(k[2] for k in self.known.values()) + self.lost


class CpuRecorder:
    """The pytest plugin: one JSON line per test (and per phase) to ``path``."""

    def __init__(self, path: str, controller: bool) -> None:
        self.path = path
        self.worker = "controller" if controller else os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.controller = controller  # xdist's: its own CPU only (its children are the workers)
        self.tree = ProcessTree()
        self.last = 0.0  # the process's CPU at start is its start-up, counted as collection
        self.overhead = 0.0  # what reading /proc cost this process (left out)

    def _write(self, nodeid: str, phase: str) -> None:
        began = time.process_time()
        now = (began if self.controller else self.tree.cpu()) - self.overhead
        line = {"nodeid": nodeid, "phase": phase, "cpu": round(now - self.last, 3),
                "worker": self.worker, "at": round(time.time(), 3)}  # fmt: skip
        self.last = now
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        self.overhead += time.process_time() - began

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._write("<collection>", "collection")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        yield
        self._write(item.nodeid, "test")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._write("<session teardown>", "teardown")


def register(config: pytest.Config) -> None:
    """Register the recorder when ``$MAGNETAR_TEST_CPU`` names a file."""
    path = os.environ.get(ENV)
    if path:
        controller = not hasattr(config, "workerinput") and bool(
            getattr(config.option, "numprocesses", None)
        )
        recorder = CpuRecorder(os.path.abspath(path), controller)
        config.pluginmanager.register(recorder, "cpu_accounting")


LANES = ("unit", "contract", "integration", "e2e", "spark", "fuzz")


def summary(path: str, top: int = 25) -> str:
    """Per lane and per file (the top ``top``) CPU-seconds of a recorded run."""
    lanes: dict[str, float] = defaultdict(float)
    files: dict[str, float] = defaultdict(float)
    tests: list[tuple[float, str]] = []
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        if row["phase"] != "test":
            lanes[f"<{row['phase']}>"] += row["cpu"]
            continue
        file = row["nodeid"].split("::")[0]
        parts = file.split("/")
        lanes[parts[1] if len(parts) > 2 and parts[1] in LANES else "other"] += row["cpu"]
        files[file] += row["cpu"]
        tests.append((row["cpu"], row["nodeid"]))
    out = [f"total {sum(lanes.values()):.1f} CPU-s"]
    out += [f"  {cpu:8.1f}  {lane}" for lane, cpu in sorted(lanes.items(), key=lambda kv: -kv[1])]
    out.append("files:")
    out += [f"  {cpu:8.1f}  {f}" for f, cpu in sorted(files.items(), key=lambda kv: -kv[1])[:top]]
    out.append("tests:")
    out += [f"  {cpu:8.1f}  {n}" for cpu, n in sorted(tests, reverse=True)[:top]]
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25))
