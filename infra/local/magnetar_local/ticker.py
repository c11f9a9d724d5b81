"""The local stack's scheduler: runs maintenance jobs on template.yaml's schedules.

EventBridge Scheduler never fires on the emulator, so ``magnetar local --schedule`` starts a
Ticker that reads the template's ``AWS::Scheduler::Schedule`` resources (``rate(...)``
expressions whose target starts a Glue job ``<stack>-<job>``) and starts the same jobs through
the local JobLauncher. A job is not started again while its previous run is still running.
Off by default and in tests.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from magnetar_local.template import LocalTemplate

log = logging.getLogger("magnetar_local.ticker")

_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Schedule:
    """Run ``job`` every ``every_s`` seconds with extra ``args``."""

    job: str
    every_s: float
    args: dict[str, str] = field(default_factory=dict)


def rate_seconds(expression: str) -> float:
    """Seconds of a ``rate(N unit)`` expression; raises ValueError for anything else
    (cron expressions are not run locally)."""
    match = _RATE.match(expression.strip())
    if not match:
        raise ValueError(f"only rate(N minutes|hours|days) schedules run locally: {expression!r}")
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2).rstrip("s")]


def schedules_from_template(template: LocalTemplate) -> list[Schedule]:
    """The job schedules of a LocalTemplate: each Scheduler schedule whose target input
    names one of the template's Glue jobs (``<stack>-<job>``)."""
    glue_jobs = {
        lid: template.resolve(r["Properties"]["Name"])
        for lid, r in template.resources.items()
        if r.get("Type") == "AWS::Glue::Job"
    }
    out: list[Schedule] = []
    for lid, resource in sorted(template.resources.items()):
        if resource.get("Type") != "AWS::Scheduler::Schedule":
            continue
        props = resource["Properties"]
        raw = repr(props.get("Target", {}).get("Input", ""))
        for job_lid, name in glue_jobs.items():
            if "${" + job_lid + "}" in raw or f"'Ref': '{job_lid}'" in raw:
                job = name.removeprefix(f"{template.stack_name}-")
                try:
                    out.append(Schedule(job, rate_seconds(props["ScheduleExpression"])))
                except ValueError as exc:
                    log.warning("schedule %s is not run locally: %s", lid, exc)
    return out


class JobRunner(Protocol):
    """What the ticker needs of a job launcher (``LocalJobLauncher``): start a run, and
    tell whether one still runs."""

    def start(self, job: str, args: Mapping[str, str]) -> str: ...

    def status(self, run_id: str) -> str: ...


class Ticker:
    """Starts each schedule's job every ``every_s`` (first run one period after start)."""

    def __init__(
        self,
        launcher: JobRunner,
        schedules: list[Schedule],
        clock: Callable[[], float] = time.monotonic,
        poll_s: float = 1.0,
    ) -> None:
        self._launcher = launcher
        self.schedules = list(schedules)
        self._clock = clock
        self._poll_s = poll_s
        self._next: dict[str, float] = {}
        self._last_run: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self, now: float | None = None) -> list[str]:
        """Start every job that is due and not still running; returns the run ids."""
        now = self._clock() if now is None else now
        started = []
        for s in self.schedules:
            due = self._next.setdefault(s.job, now + s.every_s)
            if now < due:
                continue
            self._next[s.job] = now + s.every_s
            previous = self._last_run.get(s.job)
            if previous and self._launcher.status(previous) == "RUNNING":
                log.info("%s is still running (%s): skipped this time", s.job, previous)
                continue
            run_id = self._launcher.start(s.job, s.args)
            log.info("started %s (%s)", s.job, run_id)
            self._last_run[s.job] = run_id
            started.append(run_id)
        return started

    def start(self) -> Ticker:
        self.tick()  # sets the first due times
        self._thread = threading.Thread(target=self._loop, name="magnetar-ticker", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self._poll_s):
            try:
                self.tick()
            except Exception:  # a failed start must not stop the schedule
                log.exception("starting a scheduled job failed")

    def stop(self) -> None:
        """Stop ticking and terminate the runs still running (the stack is going away)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        stop_all = getattr(self._launcher, "stop_all", None)
        if stop_all is not None:
            stop_all()
