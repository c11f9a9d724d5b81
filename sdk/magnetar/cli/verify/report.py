"""What ``magnetar verify`` found: one ``CheckResult`` per check, the ``Report`` of a run, its
table for people and its JSON for scripts, and the exit status (pure: no I/O).

Exit status: 0 when every check passed or was skipped (a skip always says why), 1 when one
failed or did not run (the overall bound was spent first, or the service check failed).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from magnetar.cli.admin.output import table

EXIT_OK = 0
EXIT_FAILED = 1


class Status(enum.Enum):
    """How a check ended."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class CheckResult:
    """One row: the check's name, how it ended, its time in ms and what it saw (for a
    skip: why it did not run; for a failure: what did not hold)."""

    name: str
    status: Status
    time_ms: int
    detail: str

    def __post_init__(self) -> None:
        if self.status is Status.SKIPPED and not self.detail.strip():
            raise ValueError(f"the skipped check {self.name!r} needs a reason")
        if self.time_ms < 0:
            raise ValueError(f"time_ms of {self.name!r} is negative: {self.time_ms}")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status.value, "timeMs": self.time_ms,
                "detail": self.detail}  # fmt: skip


@dataclass(frozen=True)
class Report:
    """A run: the service it checked, the topics' prefix, the rows in order, the whole time."""

    service_url: str
    topic_prefix: str
    results: Sequence[CheckResult] = field(default_factory=tuple)
    time_ms: int = 0

    def count(self, status: Status) -> int:
        return sum(1 for r in self.results if r.status is status)

    @property
    def ok(self) -> bool:
        """Every check passed or was skipped with its reason (and there was at least one)."""
        return bool(self.results) and self.count(Status.FAILED) == 0

    def exit_status(self) -> int:
        return EXIT_OK if self.ok else EXIT_FAILED

    def summary(self) -> str:
        """``7 passed, 2 skipped, 0 failed in 5.3 s: the deployment holds`` (or ``does
        not``)."""
        verdict = "every check held" if self.ok else "the deployment does NOT hold"
        return (
            f"{self.count(Status.PASSED)} passed, {self.count(Status.SKIPPED)} skipped, "
            f"{self.count(Status.FAILED)} failed in {self.time_ms / 1000:.1f} s "
            f"against {self.service_url} (topics {self.topic_prefix}*): {verdict}"
        )

    def render_table(self) -> str:
        """The rows (``CHECK  RESULT  TIME MS  DETAIL``; times right-aligned), then the
        summary line."""
        width = max([len("TIME MS")] + [len(str(r.time_ms)) for r in self.results])
        rows = [(r.name, r.status.value, str(r.time_ms).rjust(width), r.detail)
                for r in self.results]  # fmt: skip
        return table(("CHECK", "RESULT", "TIME MS".rjust(width), "DETAIL"), rows) + "\n\n" + self.summary()  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {
            "serviceUrl": self.service_url,
            "topicPrefix": self.topic_prefix,
            "ok": self.ok,
            "passed": self.count(Status.PASSED),
            "skipped": self.count(Status.SKIPPED),
            "failed": self.count(Status.FAILED),
            "timeMs": self.time_ms,
            "checks": [r.to_json() for r in self.results],
        }

    def render_json(self) -> str:
        return json.dumps(self.to_json(), indent=2)
