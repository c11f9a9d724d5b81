"""Producer access when a release and a waiting producer's take interleave (memory engine:
the interleaving is forced, not left to thread timing)."""

from __future__ import annotations

from dataclasses import replace

from magnetar_core.adapters.memory import MemoryTables, memory_stores
from magnetar_core.adapters.memory.producers import ProducerStateStore
from magnetar_core.domain.producers import ProducerLease
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/access-races")


class TakeRightAfterRelease(ProducerStateStore):
    """A lease store that, once a released lease (no holder) is written, lets ``take`` run
    before the releasing call goes on to commit its epoch marker."""

    take = staticmethod(lambda: None)

    def put_lease(self, pk: str, lease: ProducerLease) -> None:
        super().put_lease(pk, lease)
        if lease.holder is None and lease.epoch > 1:
            take, self.take = self.take, staticmethod(lambda: None)
            take()


def two_engines() -> tuple[Engine, Engine, TakeRightAfterRelease]:
    tables = MemoryTables()
    leases = TakeRightAfterRelease(tables)
    stores = replace(memory_stores(tables), producer_state=leases)
    holder_side = Engine.assemble(memory_settings(), stores)
    holder_side.tenants.initialize_cluster()
    return holder_side, Engine.assemble(memory_settings(), stores), leases


def test_a_release_overtaken_by_a_waiting_producers_take_still_reports_the_release():
    holder_side, waiter_side, leases = two_engines()
    holder = holder_side.access.register(TOPIC, "holder", "Exclusive")
    taken = []
    leases.take = lambda: taken.append(
        waiter_side.access.register(TOPIC, "waiter", "WaitForExclusive", wait_ms=1_000)
    )

    assert holder_side.access.release(TOPIC, "holder", holder.epoch) is True
    assert [t.epoch for t in taken] == [holder.epoch + 2]  # the release's epoch, then its own
    assert holder_side.access.release(TOPIC, "holder", holder.epoch) is False  # done already
    assert waiter_side.access.heartbeat(TOPIC, "waiter", taken[0].epoch) == taken[0].epoch
