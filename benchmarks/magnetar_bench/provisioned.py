"""DynamoDB provisioned capacity with auto scaling against on-demand, for a workload.

A pure model, minute by minute over a day (run twice: the second day is reported, so the
capacity a day starts with is what the day before left): each table's demand in capacity
units per second is the message rate times the units per message ``perf cost`` measured on
that table, and each table's provisioned capacity follows DynamoDB auto scaling as AWS
documents it (Application Auto Scaling target tracking, docs/deploying.md):

* **scale out** when consumed capacity is above the target utilization for 2 consecutive
  minutes, to consumed / target; the new capacity is there some minutes later (the
  ``UpdateTable``; ``provisioning_minutes``, 3 here, an assumption), one update at a time.
  Consumed capacity never exceeds what is provisioned plus burst, so a spike far above the
  capacity is seen only in steps of 1 / target (x1.43 at 70 %) per round;
* **scale in** when consumed capacity stays 20 points below the target for 15 consecutive
  minutes, to consumed / target, and only as far as DynamoDB allows decreases: 4 a UTC day at
  any time, then one in an hour when the hour before had none (27 a day at most);
* **burst capacity**: up to 300 s of unused capacity is kept and spent above the provisioned
  rate; what neither covers is throttled and retried the next minute (the SDK retries, a
  producer waits): every unit is served in the end, late; the minutes with throttling are
  reported, not priced;
* never below ``minimum`` nor above ``maximum`` units per table and dimension (the template's
  parameters), and every table pays its minimum even when nothing uses it.

On-demand pays every unit the demand asks for; provisioned pays capacity-hours, plus four
CloudWatch alarms per scalable target (target tracking creates them; Application Auto
Scaling itself is free). ``for_the_peak``: capacity fixed all day at the peak's demand over
the target (no throttling, no scaling). Prices: shared/PRICES.md (us-east-1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from magnetar_bench.costs import DYNAMODB_PER_RRU, DYNAMODB_PER_WRU

WCU_PER_HOUR = 0.00065
"""DynamoDB provisioned write capacity unit, dollars per hour (us-east-1)."""
RCU_PER_HOUR = 0.00013
"""DynamoDB provisioned read capacity unit, dollars per hour (us-east-1)."""
ALARM_PER_MONTH = 0.10
"""CloudWatch standard-resolution alarm, dollars per month."""
ALARMS_PER_TARGET = 4
"""Alarms target tracking keeps per DynamoDB scalable target (utilization high and low,
provisioned capacity high and low)."""
MINUTES_PER_DAY = 1440
DAYS_PER_MONTH = 30
PRICES = {"write": (WCU_PER_HOUR, DYNAMODB_PER_WRU), "read": (RCU_PER_HOUR, DYNAMODB_PER_RRU)}


def break_even_utilization(dimension: str = "write") -> float:
    """The mean utilization (consumed / provisioned) above which provisioned capacity costs
    less than on-demand: a unit-hour against 3,600 on-demand units."""
    per_hour, per_unit = PRICES[dimension]
    return per_hour / (3600 * per_unit)


@dataclass(frozen=True)
class AutoScaling:
    """Target tracking as DynamoDB runs it (see the module's docstring)."""

    target: float = 0.70
    minimum: float = 1.0
    maximum: float = 40_000.0
    scale_out_minutes: int = 2
    provisioning_minutes: int = 3
    scale_in_minutes: int = 15
    scale_in_margin: float = 0.20
    free_decreases_per_day: int = 4
    burst_seconds: float = 300.0


@dataclass
class Capacity:
    """One table and dimension over the reported day: capacity provisioned and units
    demanded (units per second, summed over the minutes), the minutes that ended with
    throttled requests waiting to be retried, the largest such backlog (in minutes of the
    capacity then provisioned), the decreases made, the highest capacity and each minute's."""

    provisioned: float = 0.0
    demanded: float = 0.0
    throttled_minutes: int = 0
    max_backlog: float = 0.0
    decreases: int = 0
    peak_capacity: float = 0.0
    trace: list[float] = field(default_factory=list)
    """The capacity of each minute."""

    @property
    def utilization(self) -> float:
        return self.demanded / self.provisioned if self.provisioned else 0.0


@dataclass
class _State:
    capacity: float
    burst: float = 0.0
    backlog: float = 0.0
    above: int = 0
    below: int = 0
    pending: tuple[int, float] | None = None  # (minute it lands, capacity)
    decreases_today: int = 0
    last_decrease: int = -(10**9)
    result: Capacity = field(default_factory=Capacity)


def _decrease_allowed(state: _State, minute: int, scaling: AutoScaling) -> bool:
    if state.decreases_today < scaling.free_decreases_per_day:
        return True
    return minute - state.last_decrease >= 60


def _step(state: _State, minute: int, demand: float, scaling: AutoScaling) -> None:
    """One minute of ``demand`` units per second, plus what was throttled before (retried),
    against the provisioned capacity and the burst kept."""
    if minute % MINUTES_PER_DAY == 0:
        state.decreases_today = 0
    if state.pending and state.pending[0] <= minute:
        state.capacity, state.pending = state.pending[1], None
    capacity, asked = state.capacity, demand * 60 + state.backlog
    served = min(asked, capacity * 60 + state.burst)
    state.burst = min(state.burst + capacity * 60 - served, scaling.burst_seconds * capacity)
    state.burst = max(state.burst, 0.0)
    state.backlog = asked - served
    consumed = served / 60
    result = state.result
    result.provisioned += capacity
    result.demanded += demand
    result.throttled_minutes += state.backlog > 0
    result.max_backlog = max(result.max_backlog, state.backlog / (capacity * 60))
    result.peak_capacity = max(result.peak_capacity, capacity)
    result.trace.append(capacity)
    wanted = min(scaling.maximum, max(scaling.minimum, consumed / scaling.target))
    state.above = state.above + 1 if consumed > scaling.target * capacity else 0
    threshold = (scaling.target - scaling.scale_in_margin) * capacity
    state.below = state.below + 1 if consumed < threshold else 0
    if state.pending:
        return
    if state.above >= scaling.scale_out_minutes and wanted > capacity:
        state.pending, state.above = (minute + scaling.provisioning_minutes, wanted), 0
    elif (state.below >= scaling.scale_in_minutes and wanted < capacity
          and _decrease_allowed(state, minute, scaling)):  # fmt: skip
        state.pending, state.below = (minute + scaling.provisioning_minutes, wanted), 0
        state.decreases_today += 1
        state.last_decrease = minute
        result.decreases += 1


def simulate(demand: list[float], scaling: AutoScaling) -> Capacity:
    """The second of two days of ``demand`` (units per second, one value a minute, a day's
    worth) on a capacity that auto scaling follows."""
    if len(demand) != MINUTES_PER_DAY:
        raise ValueError(f"demand: one value a minute for a day ({MINUTES_PER_DAY}), got {len(demand)}")  # fmt: skip
    start = min(scaling.maximum, max(scaling.minimum, demand[0] / scaling.target))
    state = _State(start)
    for minute in range(2 * MINUTES_PER_DAY):
        if minute == MINUTES_PER_DAY:
            state.result = Capacity()
        _step(state, minute, demand[minute % MINUTES_PER_DAY], scaling)
    return state.result


# ---------------------------------------------------------------------- workloads
def steady(rate: float) -> list[float]:
    """``rate`` messages per second all day."""
    return [float(rate)] * MINUTES_PER_DAY


def spiky(mean: float, peak_ratio: float, burst_minutes: int, period_minutes: int = 60) -> list[float]:  # fmt: skip
    """A burst of ``peak_ratio`` x ``mean`` for ``burst_minutes`` at the start of every
    ``period_minutes``, the rest of the time whatever keeps the day's mean at ``mean``."""
    if burst_minutes * peak_ratio > period_minutes:
        raise ValueError("the bursts alone exceed the mean: lower peak_ratio or burst_minutes")
    base = mean * (period_minutes - peak_ratio * burst_minutes) / (period_minutes - burst_minutes)
    return [mean * peak_ratio if m % period_minutes < burst_minutes else base
            for m in range(MINUTES_PER_DAY)]  # fmt: skip


def daily(mean: float, peak_ratio: float) -> list[float]:
    """A day's sine wave around ``mean`` peaking at ``peak_ratio`` x ``mean`` (<= 2)."""
    if not 1 <= peak_ratio <= 2:
        raise ValueError("daily: peak_ratio between 1 and 2")
    swing = mean * (peak_ratio - 1)
    return [mean - swing * math.cos(2 * math.pi * m / MINUTES_PER_DAY) for m in range(MINUTES_PER_DAY)]  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """A month of one workload on every table: dollars each way and how provisioned fared."""

    on_demand: float
    provisioned: float
    alarms: float
    utilization: dict[str, float]
    throttled_minutes: int
    longest_wait_minutes: float
    decreases_per_day: int
    for_the_peak: float

    @property
    def provisioned_total(self) -> float:
        return self.provisioned + self.alarms


def compare(rates: list[float], units: dict[str, dict[str, float]], scaling: AutoScaling) -> Comparison:  # fmt: skip
    """``rates``: messages per second, one a minute for a day; ``units``: per table, capacity
    units per message by dimension (``{"log": {"write": 1.2, "read": 0.1}, ...}``; a table
    with 0 still pays its minimum). Dollars for a month of 30 such days."""
    on_demand = provisioned = 0.0
    used: dict[str, list[float]] = {"write": [0.0, 0.0], "read": [0.0, 0.0]}
    decreases = targets = throttled = 0
    waited = fixed = 0.0
    for per_message in units.values():
        for dimension in ("write", "read"):
            per_hour, per_unit = PRICES[dimension]
            result = simulate([r * per_message.get(dimension, 0.0) for r in rates], scaling)
            targets += 1
            on_demand += result.demanded * 60 * per_unit
            provisioned += result.provisioned / 60 * per_hour
            throttled = max(throttled, result.throttled_minutes)
            waited = max(waited, result.max_backlog)
            peak = max(rates) * per_message.get(dimension, 0.0) / scaling.target
            fixed += max(scaling.minimum, peak) * 24 * per_hour
            used[dimension][0] += result.demanded
            used[dimension][1] += result.provisioned
            decreases = max(decreases, result.decreases)
    return Comparison(
        on_demand=on_demand * DAYS_PER_MONTH,
        provisioned=provisioned * DAYS_PER_MONTH,
        alarms=targets * ALARMS_PER_TARGET * ALARM_PER_MONTH,
        utilization={d: (u / p if p else 0.0) for d, (u, p) in used.items()},
        throttled_minutes=throttled,
        longest_wait_minutes=waited,
        for_the_peak=fixed * DAYS_PER_MONTH,
        decreases_per_day=decreases,
    )


def break_even_rate(units: dict[str, dict[str, float]], scaling: AutoScaling) -> float:
    """The steady message rate (msg/s, to 1 %) above which auto-scaled provisioned capacity,
    alarms included, costs less than on-demand; raises ValueError when it never does below
    100,000 msg/s."""

    def cheaper(rate: float) -> bool:
        month = compare(steady(rate), units, scaling)
        return month.provisioned_total < month.on_demand

    low, high = 0.001, 100_000.0
    if not cheaper(high):
        raise ValueError(
            "provisioned capacity is not cheaper at any steady rate up to 100,000 msg/s"
        )
    while high / low > 1.01:
        middle = (low * high) ** 0.5
        low, high = (low, middle) if cheaper(middle) else (middle, high)
    return high
