"""``magnetar perf quotas``: the enforcement error of publish rates and backlog quotas.

    magnetar perf quotas [--producers N] [--containers C] [--rate R] [--seconds T]
                         [--quota-bytes S] [--expected-containers E] [--check-ms MS]

On the in-memory engine, C engines share one set of stores: each is one Lambda container
with its own caches and limiters, as on AWS. N producer threads (producer i uses container
i mod C) send 100-byte messages as fast as the service admits them for T seconds.

* publishRate R msg/s (RATE_LIMIT_CONTAINERS = E): the admitted rate against R;
* a destination_storage quota of S bytes with producer_request_hold and no consumer
  reading: how far over S the backlog got (BACKLOG_CHECK_MS = MS).

Prints one JSON report. A held producer waits the answer's retry time (as the SDK).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import ProducerBlockedQuotaExceededError, Throttled
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.names import TopicName

PAYLOAD_BYTES = 100


def _engines(containers: int, expected: int, check_ms: int) -> list[Engine]:
    stores = memory_stores()
    settings = memory_settings(rate_limit_containers=expected, backlog_check_ms=check_ms)
    engines = [Engine.assemble(settings, stores) for _ in range(containers)]
    engines[0].tenants.initialize_cluster()
    return engines


def _drive(engines: list[Engine], topic: TopicName, producers: int, seconds: float) -> int:
    """Producers send until ``seconds`` pass; returns how many messages were admitted."""
    entry = encode_entry([EntryMessage(payload=b"x" * PAYLOAD_BYTES, sequence_id=0, publish_time_ms=1)], producer_name="p")  # fmt: skip
    admitted = [0] * producers
    end = time.monotonic() + seconds

    def produce(i: int) -> None:
        engine = engines[i % len(engines)]
        while time.monotonic() < end:
            try:
                engine.producer.publish(topic, entry)
                admitted[i] += 1
            except (Throttled, ProducerBlockedQuotaExceededError) as held:
                time.sleep(min(held.retry_after_ms / 1000, max(0.0, end - time.monotonic())))

    threads = [threading.Thread(target=produce, args=(i,)) for i in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(admitted)


def run(producers: int, containers: int, rate: int, seconds: float, quota_bytes: int,
        expected: int, check_ms: int) -> dict[str, Any]:  # fmt: skip
    """Both measurements; see the module's docstring."""
    engines = _engines(containers, expected, check_ms)
    topic = TopicName.parse("persistent://public/default/perf-rate")
    engines[0].admin.create_topic(topic, None)
    engines[0].quotas.set_topic_rate(topic, "publish_rate", {"publishThrottlingRateInMsg": rate})
    started = time.monotonic()
    admitted = _drive(engines, topic, producers, seconds)
    elapsed = time.monotonic() - started
    admitted_rate = admitted / elapsed

    engines = _engines(containers, expected, check_ms)
    topic = TopicName.parse("persistent://public/default/perf-backlog")
    engines[0].admin.create_topic(topic, None)
    engines[0].subscriptions.subscribe(topic, "slow", "c", "Shared", earliest=True)
    quota = {"limitSize": quota_bytes, "policy": "producer_request_hold"}
    engines[0].quotas.set_topic_backlog_quota(topic, None, quota)
    _drive(engines, topic, producers, seconds)
    ref = engines[0].topics.resolve(topic, create=False)
    backlog = engines[0].throttling.measure(ref, engines[0].runtime.now_ms()).size_bytes
    return {
        "producers": producers,
        "containers": containers,
        "expected_containers": expected,
        "publish_rate_msgs_per_s": rate,
        "admitted_msgs_per_s": round(admitted_rate, 1),
        "admitted_over_rate": round(admitted_rate / rate, 2),
        "quota_bytes": quota_bytes,
        "backlog_bytes": backlog,
        "backlog_over_quota": round(backlog / quota_bytes, 2),
        "backlog_check_ms": check_ms,
        "seconds": seconds,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="magnetar perf quotas", description=__doc__)
    p.add_argument("--producers", type=int, default=8)
    p.add_argument("--containers", type=int, default=4)
    p.add_argument("--rate", type=int, default=200, help="publishRate, msg/s")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--quota-bytes", type=int, default=100_000)
    p.add_argument("--expected-containers", type=int, default=1)
    p.add_argument("--check-ms", type=int, default=1000)
    a = p.parse_args(argv)
    report = run(a.producers, a.containers, a.rate, a.seconds, a.quota_bytes,
                 a.expected_containers, a.check_ms)  # fmt: skip
    print(json.dumps(report, indent=2))
    return 0
