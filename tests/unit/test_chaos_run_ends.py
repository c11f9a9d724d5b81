"""How a chaos run ends: a run in which nothing moves for ``stall_s`` is a hang and is
reported as stalled; a run still moving at its ``deadline_s`` is only slow: the drain takes
what is left and the invariants are checked on all of it (on the memory stack)."""

from __future__ import annotations

from magnetar_chaos.run import chaos_run
from magnetar_chaos.workload import Workload


def test_a_run_whose_consumers_stop_is_reported_stalled_long_before_its_deadline(client):
    workload = Workload(messages=200, partitions=2, producers=2, subscriptions=("Shared",),
                        nack_rate=0.0, work_s=0.01)  # fmt: skip

    def stop_after_some_acks(running, model):  # the consumers hang (messages held, unacked)
        if model.progress(["sub-shared"])["sub-shared"] >= 20:
            running.stop_consuming.set()

    report = chaos_run(client, workload, swap_at=None, deadline_s=120, stall_s=1.0,
                       during=stop_after_some_acks)  # fmt: skip
    assert report["stalled"] and report["timed_out"], report["seconds"]
    assert report["seconds"]["drained"] < 60, report["seconds"]
    assert report["counts"]["drained_at_end"]["sub-shared"] > 0


def test_a_run_still_moving_at_its_deadline_is_not_stalled_and_its_rest_is_drained_and_checked(
    client,
):
    workload = Workload(messages=200, partitions=2, producers=2, subscriptions=("Shared",),
                        consumers_per_subscription=1, nack_rate=0.0, work_s=0.02)  # fmt: skip
    report = chaos_run(client, workload, swap_at=None, deadline_s=0.5, stall_s=60)
    assert report["timed_out"] and not report["stalled"], report["seconds"]
    broken = {k: v for k, v in report["invariants"].items() if not v["ok"]}
    assert broken == {}, report["invariants"]
    drained = report["counts"]["drained_at_end"]["sub-shared"]
    assert drained > 0 and report["counts"]["subscriptions"]["sub-shared"]["distinct"] == 200
