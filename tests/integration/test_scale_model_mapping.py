"""The scale model's table of AWS requests per store call (magnetar_bench.scale.requests)
against the AWS adapters themselves: every port call a workload makes on the emulator is
counted in boto3 requests and compared with what the model charges for the same call, its
answer and its error. A change of the adapters' requests that the model does not follow
fails here. The one difference allowed: a log read's walk over ids committed since the
resolved head it knew (``magnetar_bench.scale.requests.SEQUENCED_READS``), which depends on
the store's state, not on the call."""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from magnetar_bench.scale.requests import SEQUENCED_READS, aws_requests
from magnetar_core.adapters.aws.clients import REQUESTS
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.engine import Engine, aws_stores
from magnetar_core.ports import Stores

pytestmark = pytest.mark.emulator


@dataclass
class Calls:
    """Every recorded port call: (store, method, args, result, error, boto3 requests)."""

    seen: list[tuple[str, str, tuple, Any, BaseException | None, Counter[str]]] = field(
        default_factory=list
    )
    lock: threading.Lock = field(default_factory=threading.Lock)

    def mismatches(self) -> list[str]:
        out = []
        for store, method, args, result, error, made in self.seen:
            charged = Counter(r.operation for r in aws_requests(store, method, args, result, error))
            if charged != made and not _sequencer_walk(store, method, made, charged):
                out.append(
                    f"{store}.{method}: the adapter made {dict(made)}, the model charges {dict(charged)}"
                )
        return out

    def methods(self) -> set[str]:
        return {f"{store}.{method}" for store, method, *_ in self.seen}


def _sequencer_walk(store: str, method: str, made: Counter[str], charged: Counter[str]) -> bool:
    """Whether the difference is the one the model leaves out (``SEQUENCED_READS``): a log
    read's walk past the resolved head it knew (Queries), the bound it stored (UpdateItem),
    holes (PutItems); and ``last``/``head`` without their Query when the walk saw the head
    item. Everything else must match exactly."""
    if store != "log" or method not in SEQUENCED_READS:
        return False
    extra, missing = made - charged, charged - made
    allowed_missing = {"dynamodb.Query"} if method in ("last", "head") else set()
    walked = set(extra) <= {"dynamodb.Query", "dynamodb.UpdateItem", "dynamodb.PutItem"}
    return walked and set(missing) <= allowed_missing and missing["dynamodb.Query"] <= 1


class Recorded:
    def __init__(self, name: str, inner: Any, calls: Calls) -> None:
        self._name, self._inner, self._calls = name, inner, calls

    def __getattr__(self, method: str) -> Any:
        attr = getattr(self._inner, method)
        if method.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            positional = (*args, *kwargs.values())
            result, error = None, None
            with REQUESTS.on_this_thread() as made:
                try:
                    result = attr(*args, **kwargs)
                except Exception as exc:
                    error = exc
            with self._calls.lock:
                self._calls.seen.append((self._name, method, positional, result, error, made))
            if error is not None:
                raise error
            return result

        return call


def recorded(stores: Stores, calls: Calls) -> Stores:
    return Stores(**{f.name: Recorded(f.name, getattr(stores, f.name), calls)
                     for f in dataclasses.fields(stores)})  # fmt: skip


def test_the_model_charges_each_store_call_the_requests_the_aws_adapter_makes(
    settings, engine_clients, topic, make_entry
):
    dynamodb, s3, _ = engine_clients
    calls = Calls()
    stores = recorded(aws_stores(settings, dynamodb, s3), calls)
    producer_engine, consumer_engine = (Engine.assemble(settings, stores) for _ in range(2))
    subs = consumer_engine.subscriptions
    for kind, sub in (("Shared", "s"), ("Key_Shared", "k")):
        consumer = subs.subscribe(topic, sub, None, kind, earliest=True).consumer_id
        for n in range(3):
            producer_engine.producer.publish(topic, make_entry(b"m%d" % n, key=f"k{n}"))
        producer_engine.producer.publish(topic, make_entry(b"x" * 6000))  # over the inline bound
        producer_engine.producer.publish(topic, make_entry(b"a", b"b", b"c"))  # a batch
        delivered = subs.receive(topic, sub, consumer, 1, 0)  # takes a grant
        delivered += subs.receive(topic, sub, consumer, 1, 0)  # from the grant
        delivered += subs.receive(topic, sub, consumer, 10, 0)  # the rest of it (S3 too)
        ids = [f"{d.ledger_id}:{d.entry_id}:{d.partition}:-1" for d in delivered]
        subs.acknowledge(topic, sub, consumer, ids, False)
        subs.close(topic, sub, consumer)
    # a dispatch round: one consumer's grant reads the other's item and deals it a slot,
    # which the other takes; a slot voided, then a void refused (the item is past it)
    first, second = (
        subs.subscribe(topic, "r", None, "Shared", earliest=True).consumer_id for _ in range(2)
    )
    assert subs.receive(topic, "r", first, 1, 0) and subs.receive(topic, "r", second, 1, 0)
    ref = producer_engine.topics.resolve(topic, create=False)
    assert stores.cursors.void_slot(ref.key, "r", second, 10**6)
    assert not stores.cursors.void_slot(ref.key, "r", second, 1)
    # a lost race on each conditional write: the adapters' extra requests then
    stale = stores.cursors.get(ref.key, "s")
    stores.cursors.put(ref.key, copy.deepcopy(stale))
    with pytest.raises(ConditionFailed):
        stores.cursors.put(ref.key, stale)
    stores.log.get_many(ref.key, [0])  # one id: a GetItem
    stores.log.get_many(ref.key, [0, 1])  # more: a BatchGetItem
    taken = stores.log.last(ref.key)
    with pytest.raises(ConditionFailed):
        stores.log.append(ref.key, taken)

    assert calls.mismatches() == []
    grants = {"grant", "hand_out", "put_grant", "ack_granted", "revoke_grant", "grants_of",
              "void_slot"}  # fmt: skip
    assert {f"cursors.{m}" for m in grants} <= calls.methods()
    assert {"log.allocate", "log.append", "log.last", "log.read_from", "cursors.get", "cursors.put",
            "entries.put", "entries.get", "topics.get"} <= calls.methods()  # fmt: skip
