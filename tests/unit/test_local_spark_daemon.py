"""The tests' Spark worker daemon (magnetar_local.spark_daemon): what it changes around
pyspark's own daemon, checked without a JVM."""

from __future__ import annotations

import gc
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest

from magnetar_local import spark_daemon
from magnetar_local.spark_jvm import TEST_SPARK_CONF


def test_the_tests_spark_starts_its_python_workers_through_this_daemon():
    assert TEST_SPARK_CONF["spark.python.daemon.module"] == spark_daemon.__name__


def test_a_task_leaves_nothing_for_the_daemons_collection_to_scan(heap_frozen_again):
    frozen = gc.get_freeze_count()
    seen = []

    def main(infile, outfile):
        seen.append((infile, outfile))
        return "done"

    try:
        assert spark_daemon._freezing(main)("in", "out") == "done"
        assert seen == [("in", "out")]
        assert gc.get_freeze_count() > frozen  # what the task left is frozen
        assert gc.get_count()[0] < 10  # the collection after it: next to nothing tracked
    finally:
        gc.unfreeze()


def test_a_failing_task_is_collected_and_frozen_too(heap_frozen_again):
    def main(infile, outfile):
        raise SystemExit(3)  # how pyspark's worker exits on a failure

    try:
        with pytest.raises(SystemExit):
            spark_daemon._freezing(main)(None, None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_installed_pyspark_comes_before_spark_zips_of_the_same_release(monkeypatch):
    home = Path(str(distribution("pyspark").locate_file("pyspark")))
    ours = str(home / "python" / "lib" / "pyspark.zip")
    py4j = str(home / "python" / "lib" / "py4j-0.10.9.9-src.zip")
    other = "/opt/spark/python/lib/pyspark.zip"  # another Spark's: stays where it is
    site = str(home.parent)  # where the installed pyspark is found
    monkeypatch.setattr(sys, "path", [ours, py4j, other, site])
    spark_daemon._installed_pyspark_first()
    assert sys.path == [other, site, ours, py4j]


def test_every_module_the_daemon_preloads_exists():
    for name in spark_daemon.PRELOAD:
        assert __import__(name) is not None
