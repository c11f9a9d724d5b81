"""Maintenance jobs by name (spark_glue/): the names a JobLauncher starts."""

from __future__ import annotations

JOBS = ("compact-segments", "expire", "compact-topic")
"""Every job a launcher can start, by name."""


class UnknownJob(ValueError):
    """The job name is not one of JOBS."""


def check_job(job: str) -> None:
    """Raise UnknownJob unless ``job`` is one of JOBS."""
    if job not in JOBS:
        raise UnknownJob(f"unknown job {job!r}: one of {', '.join(sorted(JOBS))}")
