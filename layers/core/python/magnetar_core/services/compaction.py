"""Topic compaction, the service side: trigger the compact-topic job and report its status.

``trigger`` marks every partition of a topic RUNNING (a conditional write on the
``$compaction`` pointer: a second trigger while one runs gets Pulsar's 409 "Compaction
already in progress") and starts the job through the job launcher with the run's id; the
job (spark_glue/compact_topic.py) builds the compacted ledgers, switches the pointers to
SUCCESS, or records ERROR with the error. ``status`` reads the pointers. Serving compacted
reads lives in ``subscriptions.compacted_reads``.

A trigger with nothing new to compact (every partition's head at or below its horizon, an
empty topic included) succeeds at once without a job: no Glue run (1 minute minimum), no
JVM locally; the compacted view it already has is the one a job would build.
"""

from __future__ import annotations

from collections.abc import Callable

from magnetar_core.domain.compaction import (
    ERROR,
    NOT_RUN,
    RUNNING,
    SUCCESS,
    CompactionInProgress,
    CompactionState,
    compacted_ledger_key,
)
from magnetar_core.domain.errors import (
    NotAllowedError,
    ServiceUnitNotReady,
    StorageFault,
)
from magnetar_core.domain.runtime import Runtime
from magnetar_core.ports import CompactionStore, JobLauncher, LogStore
from magnetar_core.services import optimistic
from magnetar_core.services.topics import PartitionRef, Topics
from magnetar_wire.names import TopicName

JOB = "compact-topic"
STALE_AFTER_MS = 2 * 3600 * 1000
"""A RUNNING run older than this is taken for crashed: a new trigger may start."""


def update_state(
    store: CompactionStore,
    pk: str,
    change: Callable[[CompactionState], bool],
    runtime: Runtime,
    max_attempts: int = 16,
) -> CompactionState:
    """Read-change-write the pointer of ``pk`` with a conditional write, retrying lost
    races with jitter. ``change`` mutates the state and says whether to write.

    Returns the state as written (or read, when nothing changed). Raises
    ServiceUnitNotReady after ``max_attempts`` lost races, and whatever ``change`` raises.
    """

    def change_of(state: CompactionState) -> tuple[CompactionState, CompactionState | None]:
        return optimistic.changed(state, state, change(state))

    outcome = optimistic.update(
        lambda: store.get(pk), change_of, lambda state: store.put(pk, state), runtime, max_attempts
    )
    if isinstance(outcome, optimistic.Conflict):
        raise ServiceUnitNotReady(f"The compaction state of {pk} is too busy; retry")
    return outcome


class Compaction:
    """Pulsar's ``PUT|GET /admin/v2/persistent/{t}/{ns}/{topic}/compaction``."""

    def __init__(
        self,
        topics: Topics,
        store: CompactionStore,
        launcher: Callable[[], JobLauncher] | None,
        runtime: Runtime,
        stale_after_ms: int = STALE_AFTER_MS,
        max_attempts: int = 16,
        log: LogStore | None = None,
    ) -> None:
        """``log``: where heads are read to skip a run with nothing new (None: every trigger
        starts the job)."""
        self._log = log
        self._topics = topics
        self._store = store
        self._make_launcher = launcher
        self._launcher: JobLauncher | None = None
        self._rt = runtime
        self._stale_ms = stale_after_ms
        self._attempts = max_attempts

    @property
    def launcher(self) -> JobLauncher | None:
        """The job launcher, made on first use (``launcher`` is its factory)."""
        if self._launcher is None and self._make_launcher is not None:
            self._launcher = self._make_launcher()
        return self._launcher

    def refs(self, name: TopicName) -> list[PartitionRef]:
        """The partitions compaction works on: all of a partitioned topic's, or one.

        Raises TopicNotFound, NotAllowedError (non-persistent topics are never compacted).
        """
        if not name.persistent:
            raise NotAllowedError(f"Topic {name} is non-persistent; only persistent topics compact")
        if name.partition_index >= 0:
            return [self._topics.resolve(name, create=False)]
        return self._topics.partitions_of(self._topics.get(name))

    def trigger(self, name: TopicName) -> str:
        """Start compacting ``name`` (every partition of a partitioned topic); returns the
        run id. Raises CompactionInProgress (409) when a run is already going on every
        partition, TopicNotFound, NotAllowedError, StorageFault (the job did not start: the
        partitions are marked ERROR with the reason)."""
        refs = self.refs(name)
        run_id = self._rt.new_id()[:16]
        states = {ref.key: self._store.get(ref.key) for ref in refs}
        busy = [ref for ref in refs if states[ref.key].running(self._rt.now_ms(), self._stale_ms)]
        if busy:
            raise CompactionInProgress(f"Compaction already in progress on {busy[0].topic}")
        if all(self._nothing_new(ref, states[ref.key]) for ref in refs):
            for ref in refs:
                update_state(self._store, ref.key, self._unchanged, self._rt, self._attempts)
            return run_id
        started = [ref for ref in refs if self._start(ref, run_id)]
        if not started:
            raise CompactionInProgress("Compaction already in progress")
        launcher = self.launcher
        if launcher is None:
            error = "no job launcher is configured (JOB_LAUNCHER)"
        else:
            try:
                launcher.start(JOB, {"topic": str(name), "run-id": run_id})
                return run_id
            except Exception as exc:  # noqa: BLE001 - any launch failure is reported as ERROR
                error = f"could not start the {JOB} job: {exc}"
        for ref in started:
            self.finish(ref.key, run_id, error=error)
        raise StorageFault(error)

    def _nothing_new(self, ref: PartitionRef, state: CompactionState) -> bool:
        """Whether a run would find nothing past the partition's compaction horizon (its
        ``state`` never ran or last succeeded, and the head is at or below the horizon;
        False without a log to read the head from)."""
        if state.status not in (NOT_RUN, SUCCESS) or self._log is None:
            return False
        return self._log.head(ref.key) <= state.horizon

    def _unchanged(self, state: CompactionState) -> bool:
        """Record a run that found nothing new: SUCCESS, same ledger and horizon. Raises
        CompactionInProgress when a run started meanwhile."""
        if state.running(self._rt.now_ms(), self._stale_ms):
            raise CompactionInProgress(f"Compaction already in progress ({state.run_id})")
        state.succeed(state.ledger, state.horizon, self._rt.now_ms())
        return True

    def _start(self, ref: PartitionRef, run_id: str) -> bool:
        """Mark one partition RUNNING for ``run_id``; False if another run got there first."""
        ledger = compacted_ledger_key(ref.key, run_id)

        def change(state: CompactionState) -> bool:
            state.start(run_id, ledger, self._rt.now_ms(), self._stale_ms)
            return True

        try:
            update_state(self._store, ref.key, change, self._rt, self._attempts)
            return True
        except CompactionInProgress:
            return False

    def finish(self, pk: str, run_id: str, *, error: str) -> None:
        """Record that run ``run_id`` failed with ``error`` (no-op if another run took over)."""

        def change(state: CompactionState) -> bool:
            if state.status != RUNNING or state.run_id != run_id:
                return False
            state.fail(error, self._rt.now_ms())
            return True

        update_state(self._store, pk, change, self._rt, self._attempts)

    def status(self, name: TopicName) -> dict:
        """``{"status": NOT_RUN|RUNNING|SUCCESS|ERROR, "lastError": "..."}``; for a
        partitioned topic, the partitions' combined: RUNNING if any runs, else ERROR if any
        failed (its error, named), else SUCCESS when all succeeded, else NOT_RUN."""
        views = [(ref, self.partition_status(ref)) for ref in self.refs(name)]
        for wanted in (RUNNING, ERROR):
            for ref, view in views:
                if view["status"] == wanted:
                    prefix = f"{ref.topic}: " if len(views) > 1 and view["lastError"] else ""
                    return {"status": wanted, "lastError": prefix + view["lastError"]}
        if all(view["status"] == SUCCESS for _, view in views):
            return {"status": SUCCESS, "lastError": ""}
        return {"status": NOT_RUN, "lastError": ""}

    def partition_status(self, ref: PartitionRef) -> dict:
        """One partition's status; a RUNNING run past the stale limit shows as ERROR."""
        state = self._store.get(ref.key)
        if state.status == RUNNING and not state.running(self._rt.now_ms(), self._stale_ms):
            return {
                "status": ERROR,
                "lastError": f"compaction run {state.run_id} stopped reporting "
                f"(started at {state.started_ms} ms, over {self._stale_ms // 1000} s ago)",
            }
        return state.view()
