"""magnetar_jobs.common: Glue-style arguments, settings, progress lines and the summary."""

from __future__ import annotations

import io
import json

import pytest

from magnetar_jobs.common import (
    JobArgs,
    parse_args,
    settings_of,
    spark_session,
)
from magnetar_jobs.reporting import Progress, Summary


def test_glue_style_arguments_give_the_tables_from_the_prefix_and_keep_unknown_ones_as_options():
    args = parse_args(
        [
            "--JOB_NAME", "magnetar-compact-segments",
            "--bucket", "entries-b",
            "--table-prefix", "magnetar",
            "--endpoint-url", "http://127.0.0.1:5000",
            "--region", "eu-west-1",
            "--JOB_RUN_ID", "jr_1",
            "--target-segment-bytes=4096",
        ]
    )  # fmt: skip
    assert args == JobArgs(
        job_name="magnetar-compact-segments",
        bucket="entries-b",
        topics_table="magnetar-topics",
        log_table="magnetar-log",
        cursors_table="magnetar-cursors",
        endpoint_url="http://127.0.0.1:5000",
        region="eu-west-1",
        options={"JOB_RUN_ID": "jr_1", "target-segment-bytes": "4096"},
    )


def test_explicit_table_names_win_over_the_prefix_and_defaults_fill_what_is_not_given():
    args = parse_args(
        ["--bucket", "b", "--table-prefix", "p", "--log-table", "my-log", "--grace-ms", "5"],
        defaults={"grace-ms": "900000", "target-segment-bytes": "8388608"},
    )
    assert (args.topics_table, args.log_table, args.cursors_table) == (
        "p-topics",
        "my-log",
        "p-cursors",
    )
    assert args.endpoint_url is None
    assert args.region == "us-east-1"
    assert args.job_name == "magnetar-job"
    assert args.int_option("grace-ms", 0) == 5
    assert args.int_option("target_segment_bytes", 0) == 8388608
    assert args.option("missing") is None


def test_a_flag_without_a_value_is_true():
    args = parse_args(["--bucket", "b", "--table-prefix", "p", "--enable-metrics", "--dry-run"])
    assert args.options == {"enable-metrics": "true", "dry-run": "true"}


def test_missing_bucket_and_tables_are_named_in_the_error():
    with pytest.raises(ValueError, match="--bucket, --topics-table, --log-table, --cursors-table"):
        parse_args(["--JOB_NAME", "x"])


def test_a_positional_argument_is_refused():
    with pytest.raises(ValueError, match="unexpected argument 'oops'"):
        parse_args(["--bucket", "b", "--table-prefix", "p", "--x", "1", "oops"])


def test_a_malformed_integer_option_names_the_option():
    args = parse_args(["--bucket", "b", "--table-prefix", "p", "--grace-ms", "soon"])
    with pytest.raises(ValueError, match="--grace-ms must be an integer, got 'soon'"):
        args.int_option("grace-ms", 0)


def test_to_argv_round_trips_through_parse_args():
    args = parse_args(
        ["--JOB_NAME", "j", "--bucket", "b", "--table-prefix", "p", "--endpoint-url", "http://e",
         "--topic", "persistent://public/default/t"]
    )  # fmt: skip
    assert parse_args(args.to_argv()) == args


def test_settings_of_names_the_jobs_tables_bucket_endpoint_and_region():
    args = parse_args(["--bucket", "b", "--table-prefix", "p", "--endpoint-url", "http://e"])
    settings = settings_of(args)
    assert (
        settings.topics_table,
        settings.log_table,
        settings.cursors_table,
        settings.entries_bucket,
        settings.endpoint_url,
        settings.region,
    ) == ("p-topics", "p-log", "p-cursors", "b", "http://e", "us-east-1")


def test_progress_prints_done_of_total_percentage_counts_and_elapsed_seconds():
    out = io.StringIO()
    times = iter([100.0, 102.5, 104.0])
    progress = Progress("compact-segments", total=4, out=out, clock=lambda: next(times))
    first = progress.advance("persistent://public/default/t", entries=10, bytes=2048)
    progress.note("purged 3 objects")
    assert first == (
        "[compact-segments] 1/4 partitions (25%) persistent://public/default/t "
        "entries=10 bytes=2048 (2.5 s)"
    )
    assert out.getvalue().splitlines() == [first, "[compact-segments] purged 3 objects (4.0 s)"]


def test_progress_without_a_total_counts_up():
    out = io.StringIO()
    progress = Progress("expire", unit="ledgers", out=out, clock=lambda: 0.0)
    assert progress.advance(n=3) == "[expire] 3 ledgers (0.0 s)"


def test_the_summary_adds_counters_and_prints_lines_and_one_json_line():
    summary = Summary("compact-segments")
    summary.add(partitions=2, entries_compacted=300, bytes_compacted=3 * 1024 * 1024)
    summary.add(entries_compacted=5, segments=3, bytes_saved=1536)
    summary.seconds = 12.25
    out = io.StringIO()
    summary.print(out)
    lines = out.getvalue().splitlines()
    assert lines[:6] == [
        "Summary of compact-segments: 2 partitions in 12.2 s",
        "  compacted: 305 entries, 3.0 MiB",
        "  deleted:   0 entries, 0 objects, 0 B",
        "  saved:     1.5 KiB",
        "  segments: 3",
        lines[5],
    ]
    assert lines[5].startswith("SUMMARY_JSON ")
    assert json.loads(lines[5].removeprefix("SUMMARY_JSON ")) == {
        "job": "compact-segments",
        "partitions": 2,
        "entries_compacted": 305,
        "bytes_compacted": 3 * 1024 * 1024,
        "entries_deleted": 0,
        "bytes_deleted": 0,
        "objects_deleted": 0,
        "bytes_saved": 1536,
        "seconds": 12.25,
        "details": {"segments": 3},
    }


def test_spark_session_returns_the_active_session_with_utc_times(spark):
    session = spark_session("any")
    assert session is spark
    assert session.conf.get("spark.sql.session.timeZone") == "UTC"


def test_a_job_started_outside_a_query_runs_its_tasks_with_the_tests_sql_settings(spark):
    """A DataFrame's ``.rdd`` job (as the expire load's cogroup) is no query execution: its
    tasks see the tests' SQL settings only as the job's local properties
    (``magnetar_local.testing.sql_conf_to_tasks``); without them they compile Java for what
    they evaluate."""
    from pyspark import TaskContext

    def factory_mode(_):
        return TaskContext.get().getLocalProperty("spark.sql.codegen.factoryMode")

    assert spark.range(1).rdd.map(factory_mode).collect() == ["NO_CODEGEN"]


def test_a_job_the_tests_submit_takes_the_tests_master_and_settings():
    """Without ``--master`` a submitted job's ``spark_session`` takes ``local[*]`` and four
    shuffle partitions a core; the tests' arguments name ``local[1]`` and their settings."""
    import shlex

    from magnetar_local.testing import spark_submit_args_for_tests

    args = shlex.split(spark_submit_args_for_tests())
    assert args[args.index("--master") + 1] == "local[1]"
    assert "spark.sql.shuffle.partitions=1" in args
    assert args[-1] == "pyspark-shell"
