"""The AWS-shaped scale model (magnetar_bench.scale): its virtual clock, its per-key
throttling and botocore-like retries, and small scenarios whose numbers are checked against
what the profile implies and whose traces keep the chaos model's invariants."""

from __future__ import annotations

import json

import pytest

from magnetar_bench.scale import cli
from magnetar_bench.scale.profile import Latency, Profile
from magnetar_bench.scale.scenarios import SCENARIOS, TARGETS, Scenario, run
from magnetar_bench.scale.sim import Simulation
from magnetar_bench.scale.stores import AwsModel
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import TooManyRequests
from magnetar_core.domain.log import IndexEntry


def fixed(profile: Profile, **changes: object) -> Profile:
    """``profile`` with every latency at its median (no spread) and no cold starts."""
    latencies = {op: Latency(lat.median_ms, lat.median_ms) for op, lat in profile.latencies.items()}
    edge = Latency(profile.edge.median_ms, profile.edge.median_ms)
    return profile.with_changes(latencies=latencies, edge=edge, cold_starts=False, **changes)


def entry(entry_id: int) -> IndexEntry:
    return IndexEntry(entry_id, "o", 0, 10, 1, False, 1, 1, "p", entry_id, entry_id)


def test_virtual_time_passes_only_by_sleeps_and_actors_wake_in_time_order():
    sim, woke = Simulation(seed=1), []

    def actor(name: str, ms: float) -> None:
        sim.sleep(ms)
        woke.append((name, sim.now_ms))

    sim.spawn(actor, "late", 30.0)
    sim.spawn(actor, "early", 10.0)
    sim.run(until_ms=100.0)
    assert woke == [("early", 10.0), ("late", 30.0)]


def test_one_producer_sends_at_one_over_its_request_latency():
    profile = fixed(Profile())
    # the sequencer's UpdateItem (its entry id), then the PutItem of the entry: 6 ms each
    latency_ms = profile.edge.median_ms + profile.handler_cpu_ms + 6.0 + 6.0
    result = run(SCENARIOS["produce-1"], seed=3, duration_s=2.0, warmup_s=0.5, profile=profile)
    assert result["msg_per_s"] == pytest.approx(1000 / latency_ms, rel=0.03)
    assert result["aws_requests_per_message"] == {
        "dynamodb.UpdateItem": pytest.approx(1.0, abs=0.02),
        "dynamodb.PutItem": pytest.approx(1.0, abs=0.02),
    }
    assert result["client_errors_total"] == 0
    assert all(result["invariants"].values())


def test_a_throttled_key_is_retried_as_botocore_retries_and_then_raises():
    profile = fixed(Profile(), wcu_per_key_per_s=10.0, burst_s=0.1, max_attempts=4)
    sim = Simulation(seed=5)
    model, memory = AwsModel(sim, profile), memory_stores()
    log = model.stores(memory).log
    model.meter.counting = True
    outcomes: list[object] = []

    def writer() -> None:
        for i in range(3):  # the bucket holds 1 unit: the 2nd write waits for a refill
            log.append("t|1", entry(i))
            outcomes.append(sim.now_ms)

    sim.spawn(writer)
    sim.run(until_ms=60_000)
    assert len(outcomes) == 3
    assert model.meter.throttled["dynamodb.PutItem"] > 0
    assert [e.entry_id for e in memory.log.read_from("t|1", 0, 10)] == [0, 1, 2]

    starved = fixed(Profile(), wcu_per_key_per_s=0.001, burst_s=1000.0, max_attempts=2)
    sim = Simulation(seed=5)
    model = AwsModel(sim, starved)
    memory = memory_stores()
    log = model.stores(memory).log
    errors: list[Exception] = []

    def greedy() -> None:
        log.append("t|1", entry(0))  # spends the one unit
        try:
            log.append("t|1", entry(1))
        except TooManyRequests as error:
            errors.append(error)

    sim.spawn(greedy)
    sim.run(until_ms=60_000)
    assert len(errors) == 1 and "throttled" in str(errors[0])
    assert memory.log.head("t|1") == 0  # the refused write changed nothing


def test_shared_and_key_shared_consumers_keep_the_invariants_and_key_shared_keeps_order():
    profile = Profile(cold_starts=False)
    for kind in ("Shared", "Key_Shared"):
        scenario = Scenario(f"{kind}-4", consumers=4, sub_type=kind, backlog=200)
        result = run(scenario, seed=7, duration_s=1.0, warmup_s=0.2, profile=profile)
        assert result["messages"] > 0
        assert all(result["invariants"].values()), result["invariant_details"]
        if kind == "Key_Shared":
            assert result["key_shared_order_breaks"] == 0


def test_a_steady_drain_is_measured_from_a_warm_up_after_the_first_delivery_not_from_it():
    profile = fixed(Profile())
    first, steady = (
        run(Scenario("drain", consumers=2, backlog=400, steady=steady), seed=7, duration_s=0.5,
            warmup_s=0.25, profile=profile)
        for steady in (False, True)
    )  # fmt: skip
    assert first["window_after_first_delivery_s"] == 0.0
    assert steady["window_after_first_delivery_s"] == 0.25
    assert 0 < steady["messages"] < 400  # the warm-up's deliveries are not counted
    assert all(steady["invariants"].values()), steady["invariant_details"]


def test_the_same_seed_gives_the_same_figures_and_another_seed_others():
    scenario = SCENARIOS["produce-8"]
    first, again = (run(scenario, seed=11, duration_s=1.0, warmup_s=0.2) for _ in range(2))
    other = run(scenario, seed=12, duration_s=1.0, warmup_s=0.2)
    assert first == again
    assert other["send_ms"] != first["send_ms"]


def test_perf_scale_prints_a_json_report_per_scenario(capsys):
    status = cli.main(["--scenarios", "produce-1", "--duration", "0.5", "--warmup", "0.1",
                       "--seed", "2", "--json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    assert [r["scenario"] for r in report["results"]] == ["produce-1"]
    assert report["results"][0]["usd_per_million"]["total"] > 0


def test_perf_scale_refuses_an_unknown_scenario(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--scenarios", "produce-3"])
    assert exit_info.value.code == 2
    assert "unknown scenario(s) produce-3" in capsys.readouterr().err


def test_lambda_runs_one_request_per_container_and_answers_503_past_the_concurrency():
    profile = fixed(Profile(), lambda_concurrency=2)
    result = run(SCENARIOS["produce-8"], seed=4, duration_s=1.0, warmup_s=0.2, profile=profile)
    assert result["lambda"]["containers"] == 2
    assert result["lambda"]["throttled"] > 0
    assert result["client_errors"]["503 ServiceUnitNotReady"] >= result["lambda"]["throttled"]
    assert all(result["invariants"].values())


def test_perf_scale_targets_names_the_scenarios_of_the_scale_targets(monkeypatch, capsys):
    ran: list[str] = []

    def fake_run(scenario, *_args):
        ran.append(scenario.name)
        return {"scenario": scenario.name, "invariants": {"acked_sends_delivered": True}}

    monkeypatch.setattr(cli, "run", fake_run)
    assert cli.main(["--scenarios", "produce-1,targets", "--json"]) == 0
    assert ran == ["produce-1", *TARGETS]
    assert set(TARGETS) <= set(SCENARIOS)


def test_a_drain_reports_where_each_consumers_time_went():
    profile = Profile()  # cold starts on: each consumer waits for its containers
    scenario = Scenario("Shared-4", consumers=4, backlog=300)
    result = run(scenario, seed=5, duration_s=2.0, warmup_s=0.2, profile=profile)
    traces = result["consumers"]
    assert sorted(traces) == ["c0", "c1", "c2", "c3"]
    assert sum(t["received"] for t in traces.values()) == result["messages"] == 300
    assert min(t["first_message_ms"] for t in traces.values()) == 0.0
    assert all(t["cold_starts"] >= 1 and t["cold_start_ms"] > 0 for t in traces.values())
    # one-message receives: most come from the grant, the rest took a grant (a cursor
    # write) or a slot a dispatch round dealt (no write)
    served = sum(t["served_from_grant"] for t in traces.values())
    taking = sum(t["cursor_receives"] for t in traces.values())
    slots = sum(t["slot_receives"] for t in traces.values())
    assert served + taking + slots == sum(t["received"] for t in traces.values())
    assert 0 < taking < served and 0 < slots < served
    writes = sum(t["cursor_writes"] for t in traces.values())
    assert 0 <= sum(t["lost_cursor_races"] for t in traces.values()) < writes
