"""``magnetar perf provisioned``'s model: DynamoDB auto scaling minute by minute against
on-demand, with figures checked by hand (the module's docstring says what AWS documents)."""

from __future__ import annotations

import json

import pytest

from magnetar_bench import provisioned, provisioned_report
from magnetar_bench.provisioned import AutoScaling, compare, simulate, steady

ONE_WRITE_TABLE = {"t": {"write": 1.0, "read": 0.0}}


def _step_up(low: float, high: float, start: int, minutes: int) -> list[float]:
    return [high if start <= m < start + minutes else low for m in range(provisioned.MINUTES_PER_DAY)]  # fmt: skip


def test_provisioned_capacity_pays_off_above_29_percent_utilization_for_writes_and_reads():
    # a WCU-hour $0.00065 against 3,600 WRU at $0.625 per million ($0.00225)
    assert provisioned.break_even_utilization("write") == pytest.approx(0.00065 / 0.00225)
    assert provisioned.break_even_utilization("read") == pytest.approx(0.00013 / 0.00045)
    assert provisioned.break_even_utilization() == pytest.approx(0.2889, abs=1e-4)


def test_a_steady_load_is_provisioned_at_the_target_and_costs_hand_checked_dollars():
    month = compare(steady(7), ONE_WRITE_TABLE, AutoScaling())
    assert month.on_demand == pytest.approx(7 * 86_400 * 0.625e-6 * 30)  # $11.34
    # 10 WCU (7 / 0.7) and the 1 RCU minimum, 24 h x 30 days
    assert month.provisioned == pytest.approx((10 * 0.00065 + 1 * 0.00013) * 24 * 30)  # $4.77
    assert month.alarms == pytest.approx(2 * 4 * 0.10)
    assert month.utilization == {"write": pytest.approx(0.7), "read": 0.0}
    assert month.throttled_minutes == 0 and month.decreases_per_day == 0
    assert month.for_the_peak == pytest.approx(month.provisioned)


def test_a_rise_within_the_burst_scales_out_after_two_minutes_and_three_to_provision():
    day = simulate(_step_up(7, 14, 600, 100), AutoScaling())
    # above 70 % at minutes 600 and 601: decided at 601, there at 604, 14 / 0.7 = 20
    assert day.trace[603] == pytest.approx(10) and day.trace[604] == pytest.approx(20)
    assert day.throttled_minutes == 0  # 300 s of 10 WCU kept: 4 minutes of 4 WCU over
    # back to 7 at 700: 15 minutes below 50 % (714), 3 to apply: 10 again at 717
    assert day.trace[716] == pytest.approx(20) and day.trace[717] == pytest.approx(10)
    assert day.decreases == 1 and day.peak_capacity == pytest.approx(20)
    assert day.provisioned == pytest.approx(10 * 1440 + 10 * (717 - 604))
    assert day.utilization == pytest.approx((7 * 1440 + 7 * 100) / (10 * 1440 + 10 * 113))


def test_a_spike_beyond_the_burst_is_throttled_and_capacity_grows_by_one_over_the_target_per_step():
    day = simulate(_step_up(7, 70, 600, 60), AutoScaling())
    # consumed capacity cannot show more than was there: 10 WCU used -> 10 / 0.7, then again
    assert day.trace[604] == pytest.approx(10 / 0.7)
    assert day.trace[607] == pytest.approx(10 / 0.7 / 0.7)
    assert day.throttled_minutes > 10
    assert day.max_backlog > 1
    assert day.peak_capacity >= 70 / 0.7  # it gets there in the end


def test_decreases_stop_at_four_a_day_then_one_an_hour():
    seesaw = [14.0 if m % 40 < 20 else 7.0 for m in range(provisioned.MINUTES_PER_DAY)]
    day = simulate(seesaw, AutoScaling())
    assert 4 < day.decreases <= 27  # 36 wanted
    downs = [m for m in range(1, len(day.trace)) if day.trace[m] < day.trace[m - 1]]
    assert len(downs) == day.decreases
    assert all(b - a >= 60 for a, b in zip(downs[4:], downs[5:], strict=False))


def test_the_steady_break_even_rate_matches_the_hand_computed_one():
    # provisioned: (r / 0.7 x 0.00065 + 0.00013) x 720 + $0.80 alarms; on-demand 1.62 r
    expected = (0.00013 * 720 + 0.80) / (1.62 - 0.00065 * 720 / 0.7)
    assert provisioned.break_even_rate(ONE_WRITE_TABLE, AutoScaling()) == pytest.approx(expected, rel=0.02)  # fmt: skip


def test_workload_shapes_keep_their_mean_and_refuse_impossible_ones():
    spikes = provisioned.spiky(100, 10, 5)
    assert sum(spikes) / len(spikes) == pytest.approx(100) and max(spikes) == 1000
    wave = provisioned.daily(100, 2.0)
    assert sum(wave) / len(wave) == pytest.approx(100) and max(wave) == pytest.approx(200)
    with pytest.raises(ValueError, match="bursts alone exceed the mean"):
        provisioned.spiky(100, 20, 5)
    with pytest.raises(ValueError, match="peak_ratio between 1 and 2"):
        provisioned.daily(100, 3.0)
    with pytest.raises(ValueError, match="one value a minute"):
        simulate([1.0] * 10, AutoScaling())


def test_units_per_message_come_from_a_perf_cost_row_by_table():
    rows = [{"workload": "unbatched", "subscriptions": 1, "dynamodb_units_by_table": {
        "magnetar-log WRU": 1_000_000, "magnetar-log RRU": 1_220_000,
        "magnetar-cursors WRU": 1_777_000}}]  # fmt: skip
    units = provisioned_report.units_from_cost(rows, "unbatched")
    assert units["log"] == {"write": 1.0, "read": 1.22}
    assert units["cursors"] == {"write": 1.777, "read": 0.0}
    assert units["notify"] == {"write": 0.0, "read": 0.0}  # still pays its minimum
    with pytest.raises(LookupError, match="no 'batched' row"):
        provisioned_report.units_from_cost(rows, "batched")


def test_perf_provisioned_prints_the_table_and_refuses_bad_settings(capsys, tmp_path):
    assert provisioned_report.main(["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    steady_100 = report["workloads"]["steady 100 msg/s"]
    assert steady_100["provisioned"] + steady_100["alarms"] < steady_100["on_demand"]
    assert report["break_even_utilization"] == pytest.approx(0.2889, abs=1e-4)
    for bad in (["--target", "95"], ["--min", "0"], ["--from-cost", str(tmp_path / "none.json")]):
        with pytest.raises(SystemExit) as exit_:
            provisioned_report.main(bad)
        assert exit_.value.code == 2
    assert "--from-cost" in capsys.readouterr().err
