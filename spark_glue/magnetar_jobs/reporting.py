"""Progress lines and the summary of a run (``SUMMARY_JSON`` for tools)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TextIO


class Progress:
    """Progress lines of a run: ``[job] 3/10 partitions (30%) topic entries=... 4.2 s``."""

    def __init__(
        self,
        job: str,
        total: int | None = None,
        unit: str = "partitions",
        out: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.job = job
        self.total = total
        self.unit = unit
        self.done = 0
        self._out = out
        self._clock = clock
        self._start = clock()

    def advance(self, what: str = "", n: int = 1, **counts: int | float | str) -> str:
        """Count ``n`` more units done and print one line (returned too)."""
        self.done += n
        of = f"/{self.total}" if self.total is not None else ""
        pct = f" ({100 * self.done // self.total}%)" if self.total else ""
        fields = "".join(f" {k}={v}" for k, v in counts.items())
        text = f"{self.done}{of} {self.unit}{pct}" + (f" {what}" if what else "") + fields
        return self.note(text)

    def note(self, message: str) -> str:
        """Print ``[job] message elapsed`` (returned too)."""
        line = f"[{self.job}] {message} ({self._clock() - self._start:.1f} s)"
        print(line, file=self._out or sys.stdout, flush=True)
        return line


@dataclass
class Summary:
    """What a run did, printed at its end. Sizes in bytes, time in seconds."""

    job: str
    partitions: int = 0
    entries_compacted: int = 0
    bytes_compacted: int = 0
    entries_deleted: int = 0
    bytes_deleted: int = 0
    objects_deleted: int = 0
    bytes_saved: int = 0
    seconds: float = 0.0
    details: dict[str, int | float] = field(default_factory=dict)

    def add(self, **counts: int | float) -> None:
        """Add to counters by name; unknown names go to ``details``."""
        for name, value in counts.items():
            if name in _SUMMARY_COUNTERS:
                setattr(self, name, getattr(self, name) + value)
            else:
                self.details[name] = self.details.get(name, 0) + value

    def as_dict(self) -> dict:
        return asdict(self)

    def render(self) -> str:
        """Human lines, then one ``SUMMARY_JSON {...}`` line for tools."""
        lines = [
            f"Summary of {self.job}: {self.partitions} partitions in {self.seconds:.1f} s",
            f"  compacted: {self.entries_compacted} entries, {_size(self.bytes_compacted)}",
            f"  deleted:   {self.entries_deleted} entries, {self.objects_deleted} objects, "
            f"{_size(self.bytes_deleted)}",
            f"  saved:     {_size(self.bytes_saved)}",
        ]
        lines += [f"  {k}: {v}" for k, v in sorted(self.details.items())]
        lines.append("SUMMARY_JSON " + json.dumps(self.as_dict(), sort_keys=True))
        return "\n".join(lines)

    def print(self, out: TextIO | None = None) -> None:
        print(self.render(), file=out or sys.stdout, flush=True)


_SUMMARY_COUNTERS = {
    "partitions",
    "entries_compacted",
    "bytes_compacted",
    "entries_deleted",
    "bytes_deleted",
    "objects_deleted",
    "bytes_saved",
    "seconds",
}


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
