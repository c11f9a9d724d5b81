"""One local Spark session for the whole test run (starting one costs ~10 s)."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession shared by every Spark test; stopped at the end of the run."""
    from pyspark.sql import SparkSession

    # Python workers run this interpreter (its packages), not whatever python3 is first on
    # the PATH (pyspark reads PYSPARK_PYTHON when the context starts).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("magnetar-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
