"""``magnetar perf fanout``: SNS + SQS fan-out priced per 64 KB chunk and per subscription,
beside Magnetar's measured rows for 1, 2 and 5 subscriptions."""

from __future__ import annotations

import json

import pytest

from magnetar_bench import anchors, fanout


def _row(subscriptions: int, total: float, writes: float = 0.0, duration: float = 0.0) -> dict:
    return {"workload": "unbatched", "subscriptions": subscriptions,
            "usd": {"total": total, "dynamodb_writes": writes, "dynamodb_reads": 0.0,
                    "lambda_duration": duration}}  # fmt: skip


def test_requests_are_billed_per_started_64_kb_chunk_of_their_payload():
    assert [fanout.chunks(n) for n in (1, 100, 65_536, 65_537)] == [1, 1, 1, 2]
    assert fanout.chunks(1024, batch=10) == 1
    assert fanout.chunks(8000, batch=10) == 2


def test_sns_and_sqs_cost_a_publish_then_a_receive_and_a_delete_per_queue():
    assert fanout.sns_sqs_fanout_usd(1) == pytest.approx(0.50 + 0.80)
    assert fanout.sns_sqs_fanout_usd(5) == pytest.approx(0.50 + 5 * 0.80)
    # SNS's send into each queue billed as an SQS request too: the upper bound
    assert fanout.sns_sqs_fanout_usd(1, enqueue_billed=True) == pytest.approx(1.70)
    # batches of 10 x 1 KB: one chunk per publish and per receive; the same as perf cost's anchor
    assert fanout.sns_sqs_fanout_usd(1, 1024, 10) == pytest.approx(anchors.sns_sqs_usd_per_million(1, 10))  # fmt: skip
    assert fanout.sns_sqs_fanout_usd(1, 1024, 50) == pytest.approx(0.13)  # SQS takes 10
    # 8,000 B x 10 = two chunks: publish 0.10, per queue 1e5 x (2 + 1) requests = 0.12
    assert fanout.sns_sqs_fanout_usd(1, 8000, 10) == pytest.approx(0.22)
    with pytest.raises(ValueError, match="at least 1"):
        fanout.sns_sqs_fanout_usd(0)


def test_one_more_subscription_costs_the_slope_between_the_fewest_and_the_most_measured():
    by_count = fanout.magnetar_by_subscriptions([_row(1, 2.0, 1.0), _row(2, 3.2, 1.5), _row(5, 6.0, 3.0)], "unbatched")  # fmt: skip
    assert sorted(by_count) == [1, 2, 5]
    assert fanout.per_subscription(by_count) == pytest.approx((6.0 - 2.0) / 4)
    assert fanout.per_subscription(by_count, "dynamodb_writes") == pytest.approx(0.5)
    assert fanout.per_subscription({1: {"total": 2.0}}) is None
    with pytest.raises(LookupError, match="no 'batched' rows"):
        fanout.magnetar_by_subscriptions([_row(1, 2.0)], "batched")


def test_the_table_puts_each_count_beside_sns_and_sqs(tmp_path, capsys):
    report = tmp_path / "cost.json"
    report.write_text(json.dumps([_row(1, 2.5, 1.0, 0.2), _row(5, 9.5, 3.0, 2.2)]))
    assert fanout.main(["--from-cost", str(report)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "| unbatched | 1 | 2.50 | 0.20 | 2.30 | 1.30 | 1.70 | 1.20 |"
    assert lines[3] == "| unbatched | 5 | 9.50 | 2.20 | 7.30 | 4.50 | 6.50 | 6.00 |"
    assert lines[4].startswith("| unbatched: one more subscription | +1 | +1.75 (DynamoDB +0.50) |")
    assert lines[4].endswith("| +0.80 | | |")


def test_perf_fanout_refuses_an_unknown_workload_or_a_missing_report(tmp_path, capsys):
    report = tmp_path / "cost.json"
    report.write_text(json.dumps([_row(1, 2.5)]))
    for argv in (["--from-cost", str(report), "--workloads", "nope"],
                 ["--from-cost", str(tmp_path / "missing.json")],
                 ["--from-cost", str(report), "--workloads", "batched"]):  # fmt: skip
        with pytest.raises(SystemExit) as exit_:
            fanout.main(argv)
        assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown workload nope" in err and "no 'batched' rows" in err
