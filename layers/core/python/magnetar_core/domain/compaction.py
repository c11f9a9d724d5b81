"""Topic compaction state of one partition (the ``$compaction`` pointer), pure.

The pointer says which compacted ledger serves ``readCompacted`` cursors (``ledger``, the
one of the last successful run, covering entry ids up to ``horizon``) and how the latest run
went (``status`` / ``last_error``, Pulsar's ``LongRunningProcessStatus``). Ledgers replaced
by a newer run, or left by a run that never finished, wait in ``retired`` (with the time
they were retired) until a grace period has passed, so in-flight reads never fail; the next
run deletes them. Every change goes through a conditional write on ``version``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from magnetar_core.domain.errors import MagnetarError
from magnetar_core.domain.log import IndexEntry
from magnetar_wire.names import TopicName

NOT_RUN = "NOT_RUN"
RUNNING = "RUNNING"
SUCCESS = "SUCCESS"
ERROR = "ERROR"
STATUSES = (NOT_RUN, RUNNING, SUCCESS, ERROR)
ALREADY_RUNNING = "Compaction already in progress"
"""Pulsar's message for a compaction triggered while one runs (HTTP 409)."""


class CompactionInProgress(MagnetarError):
    """Pulsar's 409 Conflict on ``PUT .../compaction`` while a compaction runs."""

    code = "Conflict"
    status = 409


@dataclass
class Retired:
    """A compacted ledger no longer served, since ``at_ms``; ``trashed`` once its segment
    objects are in a trash manifest (due ``at_ms`` + grace)."""

    ledger: str
    at_ms: int
    trashed: bool = False


@dataclass
class CompactionState:
    """The pointer item. Times in epoch ms; ``horizon`` -1 and ``ledger`` "" before any
    successful run."""

    status: str = NOT_RUN
    last_error: str = ""
    horizon: int = -1
    ledger: str = ""
    run_id: str = ""
    run_ledger: str = ""
    started_ms: int = 0
    finished_ms: int = 0
    retired: list[Retired] = field(default_factory=list)
    version: int = 0

    def running(self, now_ms: int, stale_after_ms: int) -> bool:
        """True while a run is RUNNING and started less than ``stale_after_ms`` ago (a run
        older than that is taken for dead: its process crashed without reporting)."""
        return self.status == RUNNING and now_ms - self.started_ms < stale_after_ms

    def start(self, run_id: str, run_ledger: str, now_ms: int, stale_after_ms: int) -> None:
        """Mark run ``run_id`` RUNNING; it builds the compacted ledger ``run_ledger``.

        Starting the run already RUNNING changes nothing. The ledger of an unfinished
        earlier run is retired (some of its items may exist). Raises CompactionInProgress
        while another run is running.
        """
        if self.status == RUNNING and self.run_id == run_id:
            return
        if self.running(now_ms, stale_after_ms):
            raise CompactionInProgress(ALREADY_RUNNING)
        if self.status == RUNNING:
            self.retire(self.run_ledger, now_ms)
        self.status, self.last_error = RUNNING, ""
        self.run_id, self.run_ledger = run_id, run_ledger
        self.started_ms, self.finished_ms = now_ms, 0

    def succeed(self, ledger: str, horizon: int, now_ms: int) -> None:
        """Switch to a compacted ledger (``""``: nothing to keep) covering entries up to
        ``horizon``; the previous ledger is retired."""
        old, self.ledger, self.horizon = self.ledger, ledger, horizon
        self.retire(old, now_ms)
        self.status, self.last_error, self.finished_ms = SUCCESS, "", now_ms

    def fail(self, error: str, now_ms: int) -> None:
        """Record a failed run; the previous compacted ledger keeps serving, the run's own
        (possibly partial) ledger is retired."""
        self.retire(self.run_ledger, now_ms)
        self.status, self.last_error, self.finished_ms = ERROR, error[:2000], now_ms

    def retire(self, ledger: str, now_ms: int) -> None:
        """Queue a ledger for deletion once the grace period has passed (never the serving
        one)."""
        if ledger and ledger != self.ledger and ledger not in {r.ledger for r in self.retired}:
            self.retired.append(Retired(ledger, now_ms))

    def untrashed(self) -> list[Retired]:
        """Retired ledgers whose objects are not in a trash manifest yet."""
        return [r for r in self.retired if not r.trashed]

    def mark_trashed(self, ledgers: list[str]) -> None:
        for r in self.retired:
            if r.ledger in ledgers:
                r.trashed = True

    def due_retired(self, now_ms: int, grace_ms: int) -> list[str]:
        """Trashed retired ledgers whose grace period has passed: their items may go."""
        return [r.ledger for r in self.retired if r.trashed and now_ms - r.at_ms >= grace_ms]

    def forget_retired(self, ledgers: list[str]) -> None:
        """Drop deleted ledgers from the retired list."""
        self.retired = [r for r in self.retired if r.ledger not in set(ledgers)]

    def view(self) -> dict:
        """Pulsar's ``LongRunningProcessStatus``: ``{"status", "lastError"}``."""
        return {"status": self.status, "lastError": self.last_error}


_LEDGER_MARK = "|compacted|"


def compacted_ledger_key(log_key: str, run_id: str) -> str:
    """The log-table partition key of the compacted ledger run ``run_id`` builds."""
    return f"{log_key}{_LEDGER_MARK}{run_id}"


def compacted_owner(pk: str) -> str | None:
    """The log key of the partition owning compacted ledger ``pk`` (None: not one).

    Jobs that look for dead ledgers treat a compacted ledger as alive exactly when its
    owner is.
    """
    owner, mark, _run = pk.rpartition(_LEDGER_MARK)
    return owner if mark else None


def ledger_segment_prefix(ledger: str) -> str:
    """The S3 prefix of the segment objects of compacted ledger ``ledger``."""
    owner, _, run_id = ledger.rpartition(_LEDGER_MARK)
    return segment_prefix(owner, run_id)


def segment_prefix(log_key: str, run_id: str) -> str:
    """The S3 prefix of the compacted segment objects of one run."""
    topic, _, ledger = log_key.rpartition("|")
    name = TopicName.parse(topic)
    return f"compacted/{name.domain}/{name.tenant}/{name.namespace}/{name.local}/{ledger}/{run_id}/"


@dataclass(frozen=True)
class CompactedEntry:
    """One entry of a compacted ledger: where the copy is, and which messages it keeps."""

    entry: IndexEntry
    kept: tuple[int, ...] | None

    @property
    def entry_id(self) -> int:
        return self.entry.entry_id
