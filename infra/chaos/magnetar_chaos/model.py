"""The independent model: what producers were told was stored, what consumers got and
acked, and what the topic holds — and the invariants checked on them at the end.

Messages are named by their payload ``<producer>:<sequence id>``; positions are
``(partition, ledger, entry, batch)``. The invariants (Pulsar's guarantees):

- ``acked_sends_delivered``: every send the service acknowledged is delivered to every
  subscription (at least once);
- ``acked_never_dispatched_again``: no message is dispatched by a receive that arrived after
  its ack was confirmed (see observer.py; only when the harness runs the gateway);
- ``stored_once``: with deduplication, each (producer name, sequence id) is stored once;
- ``partition_consistent``: every message is delivered, and read back, on the partition its
  producer sends to (producer ``p`` -> partition ``p % partitions``; a reader's messages
  on the reader's partition), at the position its send was confirmed with;
- ``key_order``: on Key_Shared and Failover subscriptions, per key, first deliveries follow
  the topic's order (message positions increase);
- ``stats``: every subscription's ``msgBacklog`` is 0 at the end and was never negative,
  ``msgInCounter`` is the number of messages stored.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

Position = tuple[int, int, int, int]  # (partition, ledger, entry, batch)

ORDERED = ("Key_Shared", "Failover")


@dataclass
class Model:
    """Thread-safe record of one run (fed by the workload's threads)."""

    confirmed: dict[str, tuple[str, Position]] = field(default_factory=dict)
    unconfirmed: set[str] = field(default_factory=set)
    deliveries: dict[str, list[tuple[str, str, Position, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # subscription -> [(payload, key, position, redelivery count)] in delivery order
    acked: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    delivered_after_ack_requested: Counter[str] = field(default_factory=Counter)
    stored: Counter[tuple[str, int]] = field(default_factory=Counter)
    stored_messages: int = 0
    negative_backlogs: list[str] = field(default_factory=list)
    nacks: int = 0
    partitions: int = 0  # of the topic (0: not partitioned)
    read_positions: list[tuple[str, Position, int]] = field(default_factory=list)
    # (payload, position, the reader's partition) of every message read back
    send_results: Counter[str] = field(default_factory=Counter)  # failed sends by result

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ producers
    def sent(self, payload: str, key: str, position: Position) -> None:
        """The service acknowledged the send of ``payload``."""
        with self._lock:
            self.confirmed[payload] = (key, position)
            self.unconfirmed.discard(payload)

    def send_failed(self, payload: str) -> None:
        """The send of ``payload`` failed for good (it may or may not be stored)."""
        with self._lock:
            if payload not in self.confirmed:
                self.unconfirmed.add(payload)

    # ------------------------------------------------------------------ consumers
    def delivered(self, sub: str, payload: str, key: str, position: Position, count: int) -> bool:
        """Record a delivery; returns False when the consumer already acked it (kept, but
        not to be processed again)."""
        with self._lock:
            self.deliveries[sub].append((payload, key, position, count))
            if payload in self.acked[sub]:
                self.delivered_after_ack_requested[sub] += 1
                return False
            return True

    def read_back(self, payload: str, position: Position, reader_partition: int) -> None:
        """A reader of partition ``reader_partition`` (-1: the topic) read ``payload``."""
        with self._lock:
            self.read_positions.append((payload, position, reader_partition))

    def ack_requested(self, sub: str, payload: str) -> None:
        with self._lock:
            self.acked[sub].add(payload)

    def nacked(self) -> None:
        with self._lock:
            self.nacks += 1

    def done(self, subs: list[str]) -> bool:
        """Every confirmed send acked on every subscription."""
        with self._lock:
            return all(set(self.confirmed) <= self.acked[s] for s in subs)

    def activity(self) -> int:
        """How many confirmed sends, deliveries, acks and nacks were recorded so far (it
        grows while the run moves)."""
        with self._lock:
            return (
                len(self.confirmed)
                + sum(map(len, self.deliveries.values()))
                + sum(map(len, self.acked.values()))
                + self.nacks
            )

    def progress(self, subs: list[str]) -> dict[str, int]:
        with self._lock:
            return {s: len(set(self.confirmed) & self.acked[s]) for s in subs}

    # ------------------------------------------------------------------ checks
    def check(self, subs: dict[str, str], dispatched_after_ack: list[str] | None,
              stats: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
        """The invariants' results: ``{name: {"ok": bool, ...details}}``; ``subs`` maps
        subscription name -> type; ``stats`` is the topic's partitioned stats at the end."""
        with self._lock:
            results: dict[str, Any] = {}
            missing = {
                s: sorted(set(self.confirmed) - {d[0] for d in self.deliveries[s]}) for s in subs
            }
            results["acked_sends_delivered"] = {
                "ok": not any(missing.values()),
                "missing": {s: m[:20] for s, m in missing.items() if m},
            }
            if dispatched_after_ack is not None:
                results["acked_never_dispatched_again"] = {
                    "ok": not dispatched_after_ack, "violations": dispatched_after_ack[:20]
                }  # fmt: skip
            twice = sorted(f"{p}:{s}" for (p, s), n in self.stored.items() if n > 1)
            results["stored_once"] = {"ok": not twice, "stored_twice": twice[:20]}
            results["partition_consistent"] = self._partition_consistent(subs)
            results["key_order"] = self._key_order(subs)
            results["stats"] = self._stats(subs, stats)
            return results

    def _partition_consistent(self, subs: dict[str, str]) -> dict[str, Any]:
        """Deliveries and read-backs on the sending producer's partition, at the confirmed
        position (a send confirmed as a duplicate has no position: -1)."""
        out: list[str] = []
        seen = [(f"{s}", payload, position, -1) for s in subs
                for payload, _, position, _ in self.deliveries[s]]  # fmt: skip
        seen += [("read back", payload, position, reader)
                 for payload, position, reader in self.read_positions]  # fmt: skip
        for where, payload, position, reader in seen:
            producer = int(payload.split(":")[0])
            wanted = producer % self.partitions if self.partitions > 0 else -1
            confirmed = self.confirmed.get(payload)
            at = confirmed[1] if confirmed is not None and confirmed[1][2] >= 0 else None
            if (
                position[0] != wanted
                or reader not in (-1, position[0])
                or at not in (None, position)
            ):
                out.append(f"{where}: {payload} at {position}, sent to partition {wanted}"
                           + (f" (confirmed at {at})" if at is not None else "")
                           + (f" by the reader of partition {reader}" if reader >= 0 else ""))  # fmt: skip
        return {"ok": not out, "count": len(out), "violations": out[:20]}

    def _key_order(self, subs: dict[str, str]) -> dict[str, Any]:
        out: list[str] = []
        counts: dict[str, int] = {}
        broken: dict[str, list[str]] = {}  # "<sub> <key>" -> its deliveries, for a few keys
        for sub, kind in subs.items():
            if kind not in ORDERED:
                continue
            before = len(out)
            seen: set[str] = set()
            last: dict[str, Position] = {}
            for payload, key, position, _ in self.deliveries[sub]:
                if payload in seen:
                    continue
                seen.add(payload)
                if key in last and position < last[key]:
                    out.append(f"{sub} key {key}: {payload} at {position} after {last[key]}")
                    if len(broken) < 3:
                        broken.setdefault(f"{sub} {key}", [
                            f"{p}@{c}" for p, k, _, c in self.deliveries[sub] if k == key
                        ])  # fmt: skip
                last[key] = max(position, last.get(key, position))
            counts[sub] = len(out) - before
        return {"ok": not out, "by_subscription": counts, "violations": out[:20],
                "deliveries_of_broken_keys": broken}  # fmt: skip

    def _stats(self, subs: dict[str, str], stats: dict[str, Any] | None) -> dict[str, Any]:
        if stats is None:
            return {"ok": True, "skipped": "no stats"}
        backlogs = {s: stats["subscriptions"].get(s, {}).get("msgBacklog") for s in subs}
        msg_in = stats.get("msgInCounter")
        ok = (
            all(b == 0 for b in backlogs.values())
            and not self.negative_backlogs
            and msg_in == self.stored_messages
        )
        return {"ok": ok, "msgBacklog": backlogs, "msgInCounter": msg_in,
                "stored": self.stored_messages,
                "negative_backlogs": self.negative_backlogs[:20]}  # fmt: skip

    def counts(self) -> dict[str, Any]:
        """Totals for the report."""
        with self._lock:
            per_sub = {}
            for sub, items in self.deliveries.items():
                firsts = len({d[0] for d in items})
                per_sub[sub] = {"delivered": len(items), "distinct": firsts,
                                "redelivered": len(items) - firsts,
                                "after_ack_requested": self.delivered_after_ack_requested[sub]}  # fmt: skip
            return {"sent_confirmed": len(self.confirmed),
                    "sends_failed": len(self.unconfirmed),
                    "send_failures": dict(self.send_results), "stored": self.stored_messages,
                    "nacks": self.nacks, "subscriptions": per_sub}  # fmt: skip
