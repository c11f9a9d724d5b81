"""magnetar_bench: the `magnetar perf` dispatch and the cost model (the runs themselves are
measurements, not tests: docs/benchmarks.md)."""

from __future__ import annotations

import importlib
import sys
from collections import Counter

import pytest

from magnetar_bench import cli, costs, delayed, messages


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["produce", "-n", "5"], "magnetar_bench.messages"),
        (["consume"], "magnetar_bench.messages"),
        (["idle", "--seconds", "1"], "magnetar_bench.messages"),
        (["delayed", "-n", "5"], "magnetar_bench.delayed"),
        (["segments", "--entries", "5"], "magnetar_bench.segments"),
        (["expire", "--entries", "5"], "magnetar_bench.expiry"),
        (["authorizer", "--requests", "5"], "magnetar_bench.authorizer"),
        (["triggers", "-n", "5"], "magnetar_bench.triggers"),
        (["cost", "--workloads", "unbatched"], "magnetar_bench.cost"),
        (["latency", "--rate", "5"], "magnetar_bench.latency"),
        (["functions", "--calls", "5"], "magnetar_bench.functions"),
    ],
)
def test_magnetar_perf_hands_each_path_to_its_harness(argv, module, monkeypatch):
    if module != "magnetar_bench.messages":
        monkeypatch.setitem(sys.modules, module, type(sys)(module))  # no Spark import needed
    harness = importlib.import_module(module)
    seen = []
    monkeypatch.setattr(harness, "main", lambda rest: seen.append(rest) or 0, raising=False)
    assert cli.main(argv) == 0
    expected = argv if module == "magnetar_bench.messages" else argv[1:]
    assert seen == [expected]


def test_the_harnesses_share_one_call_meter_and_import_no_cycle():
    from magnetar_bench.meter import CallMeter

    assert "CallMeter" in vars(messages) and messages.CallMeter is CallMeter
    assert delayed.CallMeter is CallMeter


def test_a_measurement_reports_requests_per_thousand_and_dollars_per_million():
    aws = Counter({"s3.PutObject": 10, "dynamodb.PutItem": 10})
    report = costs.Measurement("produce", 1000, 2.0, aws, 10, 1.0).report()
    assert report["messages_per_second"] == 500.0
    assert report["aws_requests_per_1000_messages"] == {
        "dynamodb.PutItem": 10.0,
        "s3.PutObject": 10.0,
    }
    dollars = report["usd_per_million_messages"]
    assert dollars["storage_requests"] == pytest.approx(
        (10 * 0.005 / 1000 + 10 * 0.625 / 1e6) * 1000, abs=1e-4
    )
    assert dollars["total"] == pytest.approx(
        dollars["storage_requests"]
        + dollars["api_gateway_and_lambda_requests"]
        + dollars["lambda_duration_arm64_256MB"],
        abs=1e-3,
    )


def test_percentile_picks_the_nearest_rank_from_the_sorted_values():
    from magnetar_bench.stats import percentile

    values = [float(v) for v in range(100, 0, -1)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0  # rank 99 of 100, not 100
    assert percentile(values, 1.0) == 100.0
    assert percentile(values, 0.0) == 1.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile([1.0, 2.0, 3.0], 0.5) == 2.0
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)


def test_latency_percentiles_are_nearest_rank_in_ms_and_none_is_refused():
    from magnetar_bench.latency import percentiles_ms

    ns = [ms * 1_000_000 for ms in range(100, 0, -1)]
    assert percentiles_ms(ns) == {"p50": 50.0, "p90": 90.0, "p99": 99.0, "max": 100.0}
    with pytest.raises(ValueError, match="no message arrived"):
        percentiles_ms([])


def test_the_authorizer_cost_is_a_lambda_request_and_a_billed_ms_per_cache_miss():
    from magnetar_bench.authorizer import cost_table, usd_per_million_requests

    per_miss = 0.20 + 0.001 * 0.25 * 0.0000133334 * 1e6  # $/M invocations of <= 1 ms
    assert usd_per_million_requests(0.2, 1.0) == round(per_miss, 5)
    table = cost_table(0.2, 300, (10,))
    assert table["no_cache"] == round(per_miss, 5)
    assert table["cache_300s_at_10_req_per_s_per_token"] == round(per_miss / 3000, 5)
    assert cost_table(0.2, 0, (10,))["cache_0s_at_10_req_per_s_per_token"] == table["no_cache"]


def test_the_sqs_mapping_costs_full_receives_and_deletes_of_ten_and_a_lambda_request_a_batch():
    from magnetar_bench.push_costs import sqs_esm_per_million

    one = sqs_esm_per_million(1, 100)  # receives and deletes of 1 each: 1 + 1 per message
    assert (one["sqs_send_requests"], one["sqs_receive_requests"]) == (100_000, 1_000_000)
    assert (one["sqs_delete_requests"], one["lambda_invocations"]) == (1_000_000, 1_000_000)
    assert one["usd_total"] == pytest.approx(0.04 + 0.80 + 0.20)
    hundred = sqs_esm_per_million(100, 100)  # 10 a receive and a delete; 100 an invocation
    assert hundred["sqs_receive_requests"] == hundred["sqs_delete_requests"] == 100_000
    assert hundred["lambda_invocations"] == 10_000
    assert hundred["usd_total"] == pytest.approx(0.04 + 0.08 + 0.002)
    large = sqs_esm_per_million(10, 10_000)  # 100 KB a full request: 2 billed chunks
    assert large["sqs_send_requests"] == large["sqs_receive_requests"] == 200_000
    sparse = sqs_esm_per_million(100, 100, sparse=True)  # too slow to fill any batch
    assert sparse["usd_total"] == pytest.approx(0.40 * 3 + 0.20)
    with pytest.raises(ValueError, match="batch size"):
        sqs_esm_per_million(0, 100)


def test_the_idle_mapping_bills_five_pollers_long_polling_every_20_s():
    from magnetar_bench.push_costs import sqs_esm_idle_usd_per_month

    assert sqs_esm_idle_usd_per_month() == pytest.approx(648_000 * 0.40 / 1e6)


def test_fanout_invocations_follow_the_driver_within_polls_and_stream_batches():
    from magnetar_bench.push_costs import fanout_invocations

    assert fanout_invocations(250, 0, 0) == 3  # at best one per 100 committed entries
    assert fanout_invocations(250, 2, 60.0) == 3  # never fewer
    assert fanout_invocations(250, 40, 60.0) == 40  # the driver's wakes, within the polls
    assert fanout_invocations(250, 200, 10.0) == 40  # 4 polls a second at most
    assert fanout_invocations(5, 200, 60.0) == 5  # never more than the entries


def test_the_machine_report_times_the_python_loop_and_reads_the_load():
    from magnetar_bench.machine import machine_report

    report = machine_report()
    assert set(report) == {"python_loop_ms", "socket_round_trip_us", "load_average_1m", "cpus"}
    assert report["python_loop_ms"] > 0 and report["socket_round_trip_us"] > 0
    assert report["cpus"] >= 1
    assert report["load_average_1m"] >= 0
