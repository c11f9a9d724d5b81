"""Durable emulator state: moto's DynamoDB and S3 writes journaled, replayed on start.

Runs inside the moto server process (``moto_boot --data-dir DIR``). Every write method of
the two backends that holds the stack's state (``JOURNALED``) is wrapped: under the one write
lock of ``moto_boot`` the method runs, and once it returned (a write that raised changed
nothing and is not recorded) its call (service, account, region, method, arguments) is
appended to the journal, in the order the writes were applied. Outside the lock the call then
waits for its record's flush before it returns, so the HTTP answer that tells a client
"stored" leaves only after the write is on disk. A method that other wrapped methods call
(``delete_objects`` -> ``delete_object``) is recorded once, as the outermost call.

On start, ``restore`` puts back the newest snapshot (each backend's tables and buckets) and
replays the journal after it by calling the same methods on the backends directly: replaying
the applied writes in their order on the state they were applied to gives the same state. A
``Snapshotter`` thread writes a new snapshot every ``snapshot_every`` records (pickled under
the write lock, so that it is exactly the state before the next segment) and starts a new
segment; restart time is then bounded by one snapshot plus at most that many records. What
a snapshot holds (moto's state, pickled) and the directory's format marker are
``magnetar_local.moto_state``'s.

Step Functions executions (delay timers) are not kept: a bucket whose timer is lost is
released by the engine's overdue rule (``delayed_delivery_release_grace_ms``). State machines,
like tables and buckets missing from the data, are created from template.yaml on each start.
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from typing import Any

from magnetar_local.journal import DataDir, Journal, hold_directory
from magnetar_local.moto_state import (
    backend,
    check_format,
    load_state,
    no_gc,
    write_snapshot_and_exit,
)

log = logging.getLogger(__name__)


JOURNALED = {
    "dynamodb": (
        "create_table",
        "delete_table",
        "update_table",
        "update_time_to_live",
        "put_item",
        "update_item",
        "delete_item",
        "transact_write_items",
    ),
    "s3": (
        "create_bucket",
        "delete_bucket",
        "put_object",
        "copy_object",
        "delete_object",
        "delete_objects",
    ),
}
"""service -> the backend methods whose calls are journaled (``batch_write_item`` is served
by ``put_item`` / ``delete_item`` calls, each journaled)."""
_active: Recorder | None = None
"""The recorder the wrapped methods journal into (one per emulator process)."""
SNAPSHOT_EVERY = 5_000
"""Records between snapshots: a restart loads the snapshot, then replays at most this many
records at about 0.2 ms each (moto's own write; several times that on a loaded machine).
Taking one costs a fork and, in the forked copy, the pickling (about 2 s of CPU at 100,000
entries); writes go on meanwhile."""


def _backend_classes() -> dict[str, type]:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.s3.models import S3Backend

    return {"dynamodb": DynamoDBBackend, "s3": S3Backend}


def _journaled(service: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` run under the write lock, then its call journaled and flushed (outermost
    calls only; none while replaying)."""

    @functools.wraps(method)
    def call(backend: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = _active
        if recorder is None:
            return method(backend, *args, **kwargs)
        depth = getattr(recorder.depth, "n", 0)
        with recorder.lock:
            recorder.depth.n = depth + 1
            try:
                result = method(backend, *args, **kwargs)
            finally:
                recorder.depth.n = depth
            if depth or recorder.replaying or recorder.journal is None:
                return result
            journal = recorder.journal
            record = (service, backend.account_id, backend.region_name, name, args, kwargs)
            seq = journal.append(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
            recorder.since_snapshot += 1
        journal.sync(seq)  # the answer waits for its record on disk, not for the lock
        return result

    call.__magnetar_journaled__ = True  # type: ignore[attr-defined]
    return call


def _unconditional_put(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A recorded ``put_item`` call without its condition when the condition uses no
    expression values or names (``attribute_not_exists(eid)``, the commit's): it held when
    the put was applied, on the state the replay has rebuilt, so it holds again; checking it
    was 40% of a replayed commit. moto 5's ``put_item(table_name, item_attrs, expected,
    condition_expression, names, values, ...)``."""
    if len(args) >= 6 and not kwargs and args[2] is None and not args[4] and not args[5]:
        return (args[0], args[1], None, None, *args[4:]), kwargs
    return args, kwargs


class Recorder:
    """Journals the wrapped writes of the backends into a data directory."""

    def __init__(self, data: DataDir, lock: threading.RLock) -> None:
        self.data = data
        self.lock = lock
        self.journal: Journal | None = None
        self.segment = 0
        self.since_snapshot = 0
        self.depth = threading.local()
        self.snapshot_load_s = 0.0
        """How long ``restore`` took to load the snapshot (0: there was none)."""
        self.replaying = False

    def install(self) -> None:
        """Journal the backends' writes into this recorder from now on (the methods are
        wrapped once per process; the wrappers write to the recorder installed last)."""
        global _active
        _active = self
        for service, cls in _backend_classes().items():
            for name in JOURNALED[service]:
                method = getattr(cls, name)
                if not getattr(method, "__magnetar_journaled__", False):
                    setattr(cls, name, _journaled(service, name, method))

    def restore(self) -> int:
        """Load the newest snapshot and replay the journal after it; start a new segment.
        Returns the number of records replayed. Raises JournalCorrupt."""
        state, payloads, following = self.data.recover()
        replayed = 0
        with self.lock, no_gc():
            self.replaying = True
            try:
                if state is not None:
                    began = time.monotonic()
                    load_state(state)
                    self.snapshot_load_s = time.monotonic() - began
                for payload in payloads:
                    service, account, region, name, args, kwargs = pickle.loads(payload)
                    if name == "put_item":
                        args, kwargs = _unconditional_put(args, kwargs)
                    getattr(backend(service, account, region), name)(*args, **kwargs)
                    replayed += 1
            finally:
                self.replaying = False
            self.segment = following
            self.journal = self.data.open_journal(following)
            self.since_snapshot = replayed
        gc.freeze()  # the restored state is long-lived: later collections skip it
        return replayed

    def snapshot(self) -> None:
        """Write a snapshot of the state now and continue in a new segment. A forked copy of
        this process pickles and writes it (forked under the write lock: the copy holds
        exactly the state before the new segment), so writes go on meanwhile. Raises
        RuntimeError when the copy failed (the journal still holds everything)."""
        with self.lock:
            previous, self.segment = self.journal, self.segment + 1
            self.journal = self.data.open_journal(self.segment)
            self.since_snapshot = 0
            if previous is not None:
                previous.close()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the forked copy; it only ever exits
                write_snapshot_and_exit(self.data, self.segment)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            raise RuntimeError(f"the snapshot process ended with status {status}")


class Snapshotter(threading.Thread):
    """Snapshots once ``every`` records were journaled since the last one."""

    def __init__(self, recorder: Recorder, every: int = SNAPSHOT_EVERY, poll_s: float = 1.0):
        super().__init__(name="magnetar-snapshotter", daemon=True)
        self.recorder, self.every, self.poll_s = recorder, every, poll_s
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.poll_s):
            if self.recorder.since_snapshot >= self.every:
                try:
                    self.recorder.snapshot()
                except Exception:  # the journal still holds everything: log, keep serving
                    log.exception("snapshot failed; the journal keeps growing")


def start(path: str, lock: threading.RLock, fsync: bool = True) -> Recorder:
    """Make this moto process durable in ``path``: lock it, restore its state, journal
    every write from now on and snapshot in the background."""

    data = DataDir(path, fsync=fsync)
    hold_directory(data)
    check_format(data)
    recorder = Recorder(data, lock)
    recorder.install()
    began = time.monotonic()
    replayed = recorder.restore()
    print(
        f"magnetar: restored {path}: {replayed} journal records in "
        f"{time.monotonic() - began:.2f} s (the snapshot: {recorder.snapshot_load_s:.2f} s)",
        flush=True,
    )
    Snapshotter(recorder).start()
    return recorder
