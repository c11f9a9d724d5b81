"""Shared code of the PySpark maintenance jobs (compact-segments, expire, compact-topic).

``common``: Glue-style arguments, settings, boto3 clients (driver and executors), the Spark
session, progress lines and the end-of-run summary. ``catalog``: which partitions and ledgers
exist. ``garbage``: grace-period deletion of objects through trash manifests. Each job keeps
its pure ``transform(df, params) -> df`` in ``<job>_transform.py``.
"""
