"""AWS Glue adapter of the JobLauncher port: starts the Glue job ``<prefix>-<job>``
declared in template.yaml (one StartJobRun request)."""

from __future__ import annotations

from collections.abc import Mapping

from magnetar_core.adapters.aws.clients import BotoClient, translated
from magnetar_core.domain.jobs import check_job


class GlueJobLauncher:
    """Starts the Glue job ``<prefix>-<job>`` on the ``glue`` client."""

    def __init__(self, glue: BotoClient, prefix: str) -> None:
        self._glue = glue
        self._prefix = prefix

    def job_name(self, job: str) -> str:
        """The Glue job of ``job``; raises UnknownJob."""
        check_job(job)
        return f"{self._prefix}-{job}"

    def start(self, job: str, args: Mapping[str, str]) -> str:
        """Start a run with ``args`` as ``--key value`` arguments; returns the Glue run id.
        Raises UnknownJob, TooManyRequests, StorageFault."""
        arguments = {f"--{k.removeprefix('--')}": str(v) for k, v in args.items()}
        with translated(f"starting the Glue job {self.job_name(job)}"):
            return self._glue.start_job_run(JobName=self.job_name(job), Arguments=arguments)[
                "JobRunId"
            ]
