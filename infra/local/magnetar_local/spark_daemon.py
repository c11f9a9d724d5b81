"""Spark's Python worker daemon in test runs (``spark.python.daemon.module``): pyspark's own
``pyspark.daemon``, made cheaper for many small tasks. What a task computes is unchanged.

- **Garbage collection.** A reused worker runs ``gc.collect()`` after every task: a full
  collection over everything the worker holds, some 120,000 objects once a job's task has
  imported boto3 and the engine (about 40 ms each, measured). The test jobs run many
  one-row tasks, so this was most of their Python workers' CPU (py-spy on
  tests/e2e/test_expire.py). Here the daemon freezes what it imported before it forks
  (``gc.freeze``: the collector skips those objects), and each task ends with a collection
  of what that task left, then a freeze of what survived it, so the daemon's own collection
  finds nothing left to scan. Cyclic garbage is still collected, task by task.
- **Imports.** The modules the jobs' tasks import (boto3, the engine's adapters, the jobs)
  are imported once in the daemon, before it forks, instead of once in each worker.
- **Bytecode.** Spark puts ``pyspark.zip`` first on the workers' ``PYTHONPATH``; Python
  compiles modules imported from a zip from source every time. The same pyspark, installed
  in this virtualenv, has its bytecode cached, so the daemon imports that one when the
  versions match.
"""

from __future__ import annotations

import gc
import importlib
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

PRELOAD = (
    "boto3",
    "botocore.client",
    "magnetar_jobs.catalog",
    "magnetar_jobs.common",
    "magnetar_jobs.compact_segments_load",
    "magnetar_jobs.compact_topic_extract",
    "magnetar_jobs.compact_topic_load",
    "magnetar_jobs.expire_extract",
    "magnetar_jobs.expire_load",
)
"""What the jobs' Python tasks import; one missing (another checkout) is skipped."""


def _installed_pyspark_first() -> None:
    """Move the zips Spark put on ``sys.path`` behind the rest when they come from the
    installed pyspark itself (``SPARK_HOME`` is its package directory: the same release)."""
    try:
        home = Path(str(distribution("pyspark").locate_file("pyspark"))).resolve()
    except PackageNotFoundError:  # a Spark of its own: its zips stay first
        return
    zips = [p for p in sys.path if p.endswith(".zip") and Path(p).resolve().is_relative_to(home)]
    sys.path[:] = [p for p in sys.path if p not in zips] + zips


def _preload() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            continue


def _freezing(main: Any) -> Any:
    """``pyspark.worker.main``, then a collection of what the task left and a freeze of the
    rest (the daemon's ``gc.collect()`` after it then has nothing to scan)."""

    def worker_main(infile: Any, outfile: Any) -> Any:
        try:
            return main(infile, outfile)
        finally:
            gc.collect()
            gc.freeze()

    return worker_main


def run() -> None:
    _installed_pyspark_first()
    import pyspark.worker
    from pyspark import daemon

    pyspark.worker.main = _freezing(pyspark.worker.main)
    _preload()
    gc.collect()
    gc.freeze()
    daemon.manager()


if __name__ == "__main__":
    run()
