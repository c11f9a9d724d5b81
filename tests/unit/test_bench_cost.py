"""``magnetar perf cost``'s model: DynamoDB request units from item sizes, dollars by service
for each front door (the runs themselves are measurements: docs/benchmarks.md)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from magnetar_bench import anchors, capacity, cost
from magnetar_bench.capacity import CapacityMeter, item_size_bytes, read_units, write_units
from magnetar_bench.cost import report
from magnetar_bench.cost.usage import Usage
from magnetar_bench.timer_usage import TimerUsage


def test_item_sizes_follow_dynamodbs_rules_for_names_strings_numbers_binaries_and_documents():
    assert item_size_bytes({"pk": {"S": "abc"}}) == 2 + 3
    assert item_size_bytes({"n": {"N": "12345"}}) == 1 + 4  # (5 digits + 1) // 2 + 1
    assert item_size_bytes({"b": {"B": "AAECAw=="}}) == 1 + 4  # base64 of 4 bytes on the wire
    assert item_size_bytes({"b": {"B": b"\x00" * 10}}) == 1 + 10  # parsed responses: bytes
    assert item_size_bytes({"m": {"M": {"k": {"BOOL": True}}}}) == 1 + 3 + 1 + 1 + 1
    assert item_size_bytes({"l": {"L": [{"S": "ab"}, {"NULL": True}]}}) == 1 + 3 + (1 + 2) + (1 + 1)
    assert item_size_bytes(None) == 0
    with pytest.raises(ValueError, match="unknown DynamoDB attribute type"):
        item_size_bytes({"x": {"Q": "?"}})


def test_writes_cost_one_unit_per_started_kb_and_reads_one_per_started_4_kb_half_if_eventual():
    assert [write_units(n) for n in (0, 1, 1024, 1025, 8192)] == [1, 1, 1, 2, 8]
    assert [read_units(n, True) for n in (0, 4096, 4097)] == [1.0, 1.0, 2.0]
    assert read_units(4097, consistent=False) == 1.0


class FakeLookup:
    def __init__(self, item):
        self.item = item

    def get_item(self, **_):
        return {"Item": self.item} if self.item else {}


def _call(meter, name, request, parsed):
    import json

    model, context = SimpleNamespace(name=name), {}
    meter._before(model=model, params={"body": json.dumps(request).encode()}, context=context)
    meter._after(model=model, parsed=parsed, context=context)


def test_the_meter_counts_units_by_item_size_for_puts_updates_queries_and_failed_conditions():
    big = {"pk": {"S": "p"}, "payload": {"S": "x" * 3000}}  # ~3 KB: 3 WRU, 1 RRU
    meter = CapacityMeter(FakeLookup(big))
    _call(meter, "PutItem", {"TableName": "log", "Item": big}, {})
    _call(meter, "UpdateItem", {"TableName": "log", "Key": {"pk": {"S": "p"}}}, {})
    _call(meter, "Query", {"TableName": "log", "ConsistentRead": True}, {"Items": [big, big]})
    _call(meter, "GetItem", {"TableName": "cursors"}, {})  # eventually consistent, not found
    failed = {"Error": {"Code": "ConditionalCheckFailedException"}}
    _call(meter, "PutItem", {"TableName": "cursors", "Item": big}, failed)
    assert meter.write_units == Counter({"log": 6, "cursors": 1})
    assert meter.read_units == Counter({"log": 2.0, "cursors": 0.5})
    assert meter.snapshot() == (7, 2.5)
    assert meter.by_table() == Counter(
        {"log WRU": 6, "cursors WRU": 1, "log RRU": 2.0, "cursors RRU": 0.5}
    )


def test_a_function_url_removes_only_the_api_gateway_charge():
    usage = Usage(http_calls=1_000_000, handler_seconds=1000.0,
                       aws=Counter({"s3.PutObject": 1000, "s3.GetObject": 1000, "dynamodb.PutItem": 5}),
                       write_units=2_000_000, read_units=4_000_000,
                       timers=TimerUsage(standard_executions=13, transitions=40))  # fmt: skip
    behind_api, behind_url = usage.usd("http-api"), usage.usd("function-url")
    assert behind_api["api_gateway"] == pytest.approx(1.00)
    assert behind_url["api_gateway"] == 0
    assert {k: v for k, v in behind_api.items() if k != "api_gateway"} == {
        k: v for k, v in behind_url.items() if k != "api_gateway"
    }
    assert behind_url["lambda_requests"] == pytest.approx(0.20)
    assert behind_url["dynamodb_writes"] == pytest.approx(1.25)
    assert behind_url["dynamodb_reads"] == pytest.approx(0.50)
    assert behind_url["s3"] == pytest.approx(0.005 + 0.0004)
    assert behind_url["step_functions"] == pytest.approx(0.001)
    assert behind_url["lambda_duration"] == pytest.approx(1000 * 0.25 * 0.0000133334)


def test_a_report_row_scales_to_a_million_messages_and_puts_sqs_beside_it():
    usage = Usage(10, 0.0, Counter(), 20, 0, TimerUsage())
    row = report.report_of("unbatched", "function-url", usage, 1e6 / 10, "million messages")
    assert row["http_calls"] == 1_000_000 and row["dynamodb_wru"] == 2_000_000
    assert row["usd"]["total"] == pytest.approx(0.20 + 1.25)
    assert row["sqs_usd"] == 1.20
    assert "| unbatched | 1 | function-url | million messages |" in report.table([row])


def test_express_timers_cost_a_start_and_their_64_mb_seconds_standard_ones_transitions():
    standard = TimerUsage(standard_executions=2, transitions=6)
    express = TimerUsage(express_executions=1_000_000, express_seconds=2_000_000.0)
    assert standard.usd() == pytest.approx(6 * 0.025 / 1000)
    assert express.usd() == pytest.approx(1.00 + 2_000_000 * (64 / 1024) * 0.00001667)
    assert TimerUsage(3, 9, 4, 1.0).executions == 7


def test_the_capacity_meter_puts_back_the_session_factory_it_wrapped():
    from magnetar_core.adapters.aws import clients

    original = clients.new_session
    meter = CapacityMeter(FakeLookup(None))
    meter.install()
    assert clients.new_session is not original
    meter.uninstall()
    assert clients.new_session is original
    assert capacity.WRITE_UNIT_BYTES == 1024


def test_sns_and_sqs_fan_out_costs_a_publish_and_a_receive_and_delete_per_subscription():
    assert anchors.sns_sqs_usd_per_million(1) == pytest.approx(0.50 + 0.80)
    assert anchors.sns_sqs_usd_per_million(3) == pytest.approx(0.50 + 3 * 0.80)
    assert anchors.sns_sqs_usd_per_million(1, batch=10) == pytest.approx(0.13)
    assert anchors.sns_sqs_usd_per_million(1, batch=50) == pytest.approx(0.13)  # SQS takes 10
    row = report.report_of("unbatched", "http-api", Usage(10, 0.0, Counter(), 20, 0, TimerUsage()),
                         1e6 / 10, "million messages")  # fmt: skip
    assert (row["sqs_usd"], row["sns_sqs_usd"]) == (1.20, 1.30)


def test_a_row_with_several_subscriptions_puts_a_queue_per_subscription_and_sns_fan_out_beside():
    usage = Usage(10, 0.0, Counter(), 20, 0, TimerUsage())
    row = report.report_of("unbatched", "function-url", usage, 1e6 / 10, "million messages", 5)
    assert row["subscriptions"] == 5
    assert row["sqs_usd"] == pytest.approx(5 * 1.20)  # the producer sends to each queue
    assert row["sns_sqs_usd"] == pytest.approx(0.50 + 5 * 0.80)
    batched = report.report_of("batched", "function-url", usage, 1e6 / 10, "million messages", 2)
    assert batched["sqs_usd"] == pytest.approx(0.24)
    assert batched["sns_sqs_usd"] == pytest.approx(0.21)
    assert "| unbatched | 5 | function-url |" in report.table([row])


def test_perf_cost_refuses_a_subscription_count_below_one_or_not_a_number(capsys):
    for bad in ("0", "two", "1,-1", ","):
        with pytest.raises(SystemExit) as exit_:
            cost.main(["--subscriptions", bad])
        assert exit_.value.code == 2
        assert "--subscriptions: positive whole numbers" in capsys.readouterr().err


def test_an_idle_spell_is_reported_as_measured_not_multiplied_by_a_month():
    usage = Usage(6, 0.5, Counter({"dynamodb.Query": 12}), 0, 12, TimerUsage())
    row = report.report_of("idle-spell", "http-api", usage, 1.0, "idle spell of 30 s")
    assert row["http_calls"] == 6 and row["dynamodb_rru"] == 12
    assert row["usd"]["total"] == pytest.approx(sum(usage.usd("http-api").values()), abs=1e-8)
    assert 0 < row["usd"]["total"] < 0.0001  # micro-dollars, kept: not rounded away
    assert row["sqs_usd"] is None and row["sns_sqs_usd"] is None
    month = {"workload": "idle-month", "front_door": "http-api", "per": "month",
             "usd": {"total": 0.037}, "sqs_usd": 0.05, "sns_sqs_usd": 0.05}  # fmt: skip
    lines = report.table([row, month]).splitlines()
    assert lines[2].startswith("| idle-spell | 1 | http-api | idle spell of 30 s |")
    assert lines[2].endswith("| - | - |") and "e-06 |" in lines[2]
    assert (
        lines[3]
        == "| idle-month | 1 | http-api | month | - | - | - | - | - | - | - | 0.0370 | 0.0500 | 0.0500 |"
    )
