"""Job arguments, clients and the Spark session of a run (progress lines and the summary:
``magnetar_jobs.reporting``).

Arguments are Glue-style: ``--JOB_NAME n --bucket b --table-prefix p --endpoint-url u``
(``--key=value`` too). Glue adds its own (``--JOB_ID``, ``--TempDir``, ...): every argument
the framework does not know lands in ``JobArgs.options``, where a job reads its own knobs.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

_KNOWN = {
    "JOB_NAME": "job_name",
    "bucket": "bucket",
    "topics-table": "topics_table",
    "log-table": "log_table",
    "cursors-table": "cursors_table",
    "endpoint-url": "endpoint_url",
    "region": "region",
}
_TABLE_SUFFIXES = {"topics_table": "topics", "log_table": "log", "cursors_table": "cursors"}
# Credentials an emulator accepts (the local stack's moto server takes any); used only when
# an endpoint URL is given and the environment has none, e.g. in Spark's Python workers.
_EMULATOR_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@dataclass(frozen=True)
class JobArgs:
    """Where a job works: bucket, tables, endpoint (None: real AWS) and its own options."""

    job_name: str
    bucket: str
    topics_table: str
    log_table: str
    cursors_table: str
    endpoint_url: str | None = None
    region: str = "us-east-1"
    options: dict[str, str] = field(default_factory=dict)

    def option(self, name: str, default: str | None = None) -> str | None:
        """A job option by name (``target-segment-bytes``; ``_`` and ``-`` are the same)."""
        key = _normal(name)
        for k, v in self.options.items():
            if _normal(k) == key:
                return v
        return default

    def int_option(self, name: str, default: int) -> int:
        """A job option as an integer; raises ValueError naming the option if malformed."""
        value = self.option(name)
        if value is None or value == "":
            return default
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"--{name} must be an integer, got {value!r}") from None

    def to_argv(self) -> list[str]:
        """The arguments that rebuild these ``JobArgs`` through ``parse_args``."""
        argv = ["--JOB_NAME", self.job_name, "--bucket", self.bucket]
        argv += ["--topics-table", self.topics_table, "--log-table", self.log_table]
        argv += ["--cursors-table", self.cursors_table, "--region", self.region]
        if self.endpoint_url:
            argv += ["--endpoint-url", self.endpoint_url]
        for key, value in self.options.items():
            argv += [f"--{key}", value]
        return argv


def _normal(name: str) -> str:
    return name.replace("_", "-").lower()


def _pairs(argv: Sequence[str]) -> dict[str, str]:
    """``--key value`` / ``--key=value`` pairs; a ``--flag`` without a value is ``"true"``."""
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--") or len(token) == 2:
            raise ValueError(f"unexpected argument {token!r}: arguments are --key value pairs")
        if "=" in token:
            key, value = token[2:].split("=", 1)
            i += 1
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            key, value = token[2:], argv[i + 1]
            i += 2
        else:
            key, value = token[2:], "true"
            i += 1
        out[key] = value
    return out


def parse_args(
    argv: Sequence[str] | None = None, defaults: Mapping[str, str] | None = None
) -> JobArgs:
    """Parse Glue-style arguments (``sys.argv[1:]`` when ``argv`` is None).

    ``defaults`` gives values for any argument not passed (framework ones or job options).
    Tables come from ``--topics-table`` / ``--log-table`` / ``--cursors-table`` or else from
    ``--table-prefix p`` (``p-topics``, ``p-log``, ``p-cursors``, as template.yaml names
    them). Raises ValueError naming what is missing or malformed.
    """
    given = {**dict(defaults or {}), **_pairs(list(sys.argv[1:] if argv is None else argv))}
    known: dict[str, str] = {}
    options: dict[str, str] = {}
    prefix = None
    for key, value in given.items():
        normal = _normal(key)
        match = next((f for k, f in _KNOWN.items() if _normal(k) == normal), None)
        if match is not None:
            known[match] = value
        elif normal == "table-prefix":
            prefix = value
        else:
            options[key] = value
    for attr, suffix in _TABLE_SUFFIXES.items():
        if attr not in known and prefix:
            known[attr] = f"{prefix}-{suffix}"
    missing = [a for a in ("bucket", *_TABLE_SUFFIXES) if not known.get(a)]
    if missing:
        names = ", ".join("--" + a.replace("_", "-") for a in missing)
        raise ValueError(f"missing job arguments: {names} (or --table-prefix for the tables)")
    return JobArgs(
        job_name=known.get("job_name") or "magnetar-job",
        bucket=known["bucket"],
        topics_table=known["topics_table"],
        log_table=known["log_table"],
        cursors_table=known["cursors_table"],
        endpoint_url=known.get("endpoint_url") or None,
        region=known.get("region") or "us-east-1",
        options=options,
    )


def settings_of(args: JobArgs):
    """The engine settings for ``args`` (magnetar_core.settings.Settings)."""
    from magnetar_core.settings import Settings

    return Settings(
        topics_table=args.topics_table,
        log_table=args.log_table,
        cursors_table=args.cursors_table,
        entries_bucket=args.bucket,
        endpoint_url=args.endpoint_url,
        region=args.region,
    )


def engine_of(args: JobArgs):
    """An engine on the job's tables and bucket, for driver-side cursor and policy work."""
    from magnetar_core.engine import Engine

    return Engine.build(settings_of(args), clients=(dynamodb_client(args), s3_client(args)))


def _client(service: str, args: JobArgs):
    return _cached_client(service, args.endpoint_url, args.region)


@functools.lru_cache(maxsize=16)
def _cached_client(service: str, endpoint_url: str | None, region: str):
    """One client per service, endpoint and region in a process (the driver, or a Python
    worker that Spark reuses across tasks): a client costs ~0.2 s of CPU to build (its
    session loads the service model), and boto3 clients are thread-safe."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 6},
        max_pool_connections=32,
        connect_timeout=5,
        read_timeout=60,
    )
    credentials = {}
    if endpoint_url and not os.environ.get("AWS_ACCESS_KEY_ID"):
        session = boto3.session.Session(region_name=region)
        if session.get_credentials() is None:
            credentials = dict(_EMULATOR_CREDENTIALS)
    session = boto3.session.Session(region_name=region, **credentials)
    return session.client(service, endpoint_url=endpoint_url, config=config)


def s3_client(args: JobArgs):
    """A boto3 S3 client for ``args`` (build it inside an executor, never ship one)."""
    return _client("s3", args)


def dynamodb_client(args: JobArgs):
    """A boto3 DynamoDB client for ``args`` (build it inside an executor, never ship one)."""
    return _client("dynamodb", args)


def spark_session(app_name: str):
    """The active SparkSession or a new one, with UTC session times.

    Under spark-submit, Glue and EMR Serverless the launcher configures the master (the
    JVM is already running: ``PYSPARK_GATEWAY_PORT`` is set); a plain ``python job.py``
    gets ``local[*]``.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name).config("spark.sql.session.timeZone", "UTC")
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ or "--master" in os.environ.get(
        "PYSPARK_SUBMIT_ARGS", ""
    )
    if not submitted:
        # Python workers run this interpreter (read when the context starts).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            builder.master("local[*]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            # a few shuffle partitions per core, not 200: local plans are small
            .config("spark.sql.shuffle.partitions", str(4 * (os.cpu_count() or 1)))
        )
    return builder.getOrCreate()
