"""``magnetar chaos soak --minutes N``: chaos runs back to back for N minutes, with consumers
leaving and joining every ``--churn-every-s`` and the local service restarted every
``--restart-every-s`` (harness.restart: the gateway stops listening for a second and every
Lambda container is dropped — cold starts — while the emulator's DynamoDB, S3 and Step
Functions keep their state, as AWS keeps it when Lambda recycles its containers).

Each round is one ``chaos_run`` on a new topic of ``--messages-per-round`` messages; the
report sums the rounds and lists every round whose invariants failed.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import magnetar as pulsar
from magnetar_chaos.faults import FaultInjector
from magnetar_chaos.harness import restart
from magnetar_chaos.model import Model
from magnetar_chaos.observer import GatewayObserver
from magnetar_chaos.run import chaos_run
from magnetar_chaos.workload import Running, Workload


def soak(
    client: pulsar.Client,
    stack: Any,
    args: argparse.Namespace,
    *,
    injector: FaultInjector | None,
    observer: GatewayObserver | None,
) -> dict[str, Any]:
    """Rounds until ``args.minutes`` have passed; returns the summed report."""
    rng = random.Random(args.seed)
    started = time.monotonic()
    end = started + args.minutes * 60
    state = {"next_churn": started + args.churn_every_s, "churns": 0, "restarts": 0,
             "next_restart": started + (args.restart_every_s or float("inf")),
             "down_s": 0.0}  # fmt: skip

    def during(running: Running, _model: Model) -> None:
        now = time.monotonic()
        if now >= state["next_churn"]:
            running.swap(rng.choice(sorted(running.consumers)))
            state["churns"] += 1
            state["next_churn"] = now + args.churn_every_s
        if stack is not None and now >= state["next_restart"]:
            state["down_s"] += restart(stack, down_s=1.0)
            state["restarts"] += 1
            state["next_restart"] = now + args.restart_every_s

    rounds: list[dict[str, Any]] = []
    while time.monotonic() < end:
        if injector is not None:
            injector.enabled = True
        workload = Workload(messages=args.messages_per_round, partitions=args.partitions,
                            producers=args.producers, consumers_per_subscription=args.consumers,
                            nack_rate=args.nack_rate, seed=args.seed + len(rounds))  # fmt: skip
        report = chaos_run(client, workload, injector=injector, observer=observer,
                           swap_at=None, deadline_s=max(end - time.monotonic(), 0) + 600,
                           during=during)  # fmt: skip
        rounds.append(report)
    return _summary(rounds, state, time.monotonic() - started, injector, observer)


def _summary(rounds: list[dict[str, Any]], state: dict[str, Any], elapsed_s: float,
             injector: FaultInjector | None, observer: GatewayObserver | None) -> dict[str, Any]:  # fmt: skip
    failed = [
        {"round": i, "topic": r["workload"]["topic"], "timed_out": r["timed_out"],
         "violated": {k: v for k, v in r["invariants"].items() if not v["ok"]}}
        for i, r in enumerate(rounds) if not r["ok"]
    ]  # fmt: skip
    totals: dict[str, int] = {"sent_confirmed": 0, "sends_failed": 0, "stored": 0, "nacks": 0,
                              "delivered": 0, "redelivered": 0}  # fmt: skip
    for r in rounds:
        c = r["counts"]
        for name in ("sent_confirmed", "sends_failed", "stored", "nacks"):
            totals[name] += c[name]
        for sub in c["subscriptions"].values():
            totals["delivered"] += sub["delivered"]
            totals["redelivered"] += sub["redelivered"]
    invariants = {"all_rounds": {"ok": not failed, "failed_rounds": failed}}
    return {
        "ok": not failed,
        "minutes": round(elapsed_s / 60, 1),
        "rounds": len(rounds),
        "round_seconds": [r["seconds"]["drained"] for r in rounds],
        "churns": state["churns"],
        "restarts": state["restarts"],
        "restart_down_s": round(state["down_s"], 1),
        "totals": totals,
        "faults": injector.summary() if injector is not None else None,
        "gateway": observer.summary() if observer is not None else None,
        "invariants": invariants,
    }
