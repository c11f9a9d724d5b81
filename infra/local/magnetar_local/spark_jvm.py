"""Spark's JVM in local runs: the tests' JVM options and Spark settings, and a class data
sharing (CDS) archive of Spark's classes.

A Spark JVM loads and verifies some 15,000 classes before its first query answers. Java 17
can dump the classes a run loaded into an archive (``-XX:ArchiveClassesAtExit``) and map
them from it in later runs (``-XX:SharedArchiveFile``): measured on this repository's test
settings, a JVM's start and first query take 3.7 instead of 7.2 CPU-seconds (1.7 s instead
of 3.7 s to start). ``make install`` builds the archive once per virtualenv (``python -m
magnetar_local.spark_jvm``: a small workload of the kinds of plans the jobs run, about 15 s)
and the tests' Spark sessions and jobs use it. A JVM that finds the archive unusable (another
JDK, another Spark) runs without it (``-Xshare:auto``, Java's default), so a stale archive
costs speed, never correctness.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["TEST_JVM_OPTIONS", "TEST_SPARK_CONF", "archive_path", "build", "java_options"]

TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JVM options of the tests' Spark: test jobs are many small plans, where the JIT's second
tier and the parallel GC cost more than they give (measured: the JVM's CPU time halves, its
start from ~10 s to ~4.5 s of CPU)."""

TEST_SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # One partition after a shuffle (a task each, in the JVM and in a Python worker), as
    # adaptive execution (off below) would coalesce a few rows to
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.session.timeZone": "UTC",
    # Interpreted expressions, no generated Java: a test plan runs over a few rows once, so
    # compiling code for it (Janino) costs more than it saves (measured on tests/e2e/
    # test_expire.py: the JVM's CPU time 38 s -> 30 s). The results are the same.
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    # No adaptive execution: it re-plans a query after every shuffle and broadcast stage,
    # which a few rows never repay. Measured with one shuffle partition, against adaptive
    # execution and two: tests/spark/test_expire_transform.py and test_compact_topic_
    # transform.py 52 -> 35 CPU-s (JVM and Python workers), tests/e2e/test_expire.py and
    # tests/integration/test_compaction.py 64 -> 51. The jobs keep it on real data.
    "spark.sql.adaptive.enabled": "false",
    # pyspark's worker daemon with the garbage collector's full pass after every task made
    # cheap, the jobs' imports done once before it forks (magnetar_local.spark_daemon)
    "spark.python.daemon.module": "magnetar_local.spark_daemon",
}
"""Spark settings of the tests' session and of the jobs tests start with spark-submit."""


def archive_path() -> Path:
    """Where this virtualenv's archive lives: named after the pyspark version it holds (read
    from its distribution's metadata: importing pyspark.version imports all of pyspark, which
    every pytest process asks for at start-up, Spark or not)."""
    from importlib.metadata import version

    return Path(sys.prefix) / f"spark-cds-{version('pyspark')}.jsa"


def java_options(base: str) -> str:
    """``base`` JVM options, plus the archive when it exists."""
    path = archive_path()
    return f"{base} -XX:SharedArchiveFile={path}" if path.is_file() else base


def build(base: str, conf: dict[str, str]) -> Path:
    """Dump the archive (unless it exists) by running ``_workload`` in a JVM started with
    ``base`` options and ``conf``; returns its path. Raises CalledProcessError when the run
    fails (the archive is then left absent: Spark runs without it)."""
    path = archive_path()
    if path.is_file():
        return path
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    confs = [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]
    options = f"{base} -XX:ArchiveClassesAtExit={partial}"
    env = dict(os.environ)
    env["PYSPARK_SUBMIT_ARGS"] = " ".join(
        ["--driver-java-options", f'"{options}"', *confs, "pyspark-shell"]
    )
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    # stderr is read to its end: the JVM, which dumps the archive as it exits after the
    # Python process, holds it open until it is done (its warnings, one per class it
    # skips, are not kept)
    subprocess.run([sys.executable, "-m", "magnetar_local.spark_jvm", "--workload"],
                   env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)  # fmt: skip
    partial.replace(path)
    return path


def _workload() -> None:
    """The kinds of plans the jobs run, on a few rows: DataFrames from Python rows and from a
    Python RDD, joins (broadcast and sort-merge), aggregates, a window, a cogroup of pair
    RDDs, collects."""
    from pyspark.sql import SparkSession, Window
    from pyspark.sql import functions as F

    spark = SparkSession.builder.master("local[2]").appName("magnetar-cds").getOrCreate()
    rows = [(f"t{i % 3}", i, f"k{i % 5}", i * 10) for i in range(40)]
    log = spark.createDataFrame(rows, "pk string, eid long, key string, size long")
    rdd = spark.sparkContext.parallelize(range(4), 2).mapPartitions(
        lambda part: ((f"t{i}", i, f"s{i}") for i in part)
    )
    cursors = spark.createDataFrame(rdd, "pk string, mark long, sub string")
    joined = log.join(F.broadcast(cursors), "pk", "left").join(cursors.hint("merge"), "pk")
    latest = Window.partitionBy("pk", "key").orderBy(F.col("eid").desc())
    ranked = log.withColumn("n", F.row_number().over(latest)).where("n = 1")
    totals = joined.groupBy("pk").agg(F.count("*").alias("c"), F.max("eid"), F.sum("size"))
    totals.union(totals).distinct().orderBy("pk").collect()
    ranked.select("pk", "key", "eid").collect()
    pairs = log.rdd.map(lambda r: (r.pk, r.eid)).cogroup(cursors.rdd.map(lambda r: (r.pk, r)))
    pairs.mapPartitions(lambda part: [sum(1 for _ in part)]).collect()
    spark.stop()
    from pyspark import SparkContext

    if SparkContext._gateway is not None:  # the JVM exits now, writing the archive
        SparkContext._gateway.shutdown()


if __name__ == "__main__":
    if sys.argv[1:] == ["--workload"]:
        _workload()
    else:
        print(build(TEST_JVM_OPTIONS, TEST_SPARK_CONF))
