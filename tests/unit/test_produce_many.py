"""Multi-entry produce requests: the framing (magnetar_wire.frames) and the service that
commits the frames in order on the in-memory engine (services.produce.many)."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine import Engine
from magnetar_core.services.entries import PublishResult
from magnetar_core.services.produce.many import EntryFailure, ProduceMany
from magnetar_local.memory_service import memory_settings
from magnetar_wire import EntryMessage, encode_entry
from magnetar_wire.frames import (
    MAX_ENTRIES_PER_REQUEST,
    MAX_REQUEST_BYTES,
    FrameError,
    decode_frames,
    encode_frames,
)
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/many")


def entry(payload: bytes, sequence_id: int = 0, deliver_at_ms: int | None = None) -> bytes:
    message = EntryMessage(payload=payload, sequence_id=sequence_id, publish_time_ms=1,
                           deliver_at_ms=deliver_at_ms)  # fmt: skip
    return encode_entry([message], producer_name="p")


# ------------------------------------------------------------------ framing


def test_frames_round_trip_entries_in_order():
    entries = [b"a", b"bb" * 300, b"c"]
    body = encode_frames(entries)
    assert len(body) == sum(4 + len(e) for e in entries)
    assert body[:5] == b"\x00\x00\x00\x01a"
    assert decode_frames(body) == entries


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"", "no entry frame"),
        (b"\x00\x00", "frame 0 at byte 0: 2 bytes left"),
        (b"\x00\x00\x00\x01a\x00\x00\x00\x05abc", "frame 1 at byte 5 declares 5 bytes, only 3"),
        (b"\x00\x00\x00\x00", "frame 0 at byte 0 has length 0"),
    ],
)
def test_a_malformed_body_names_the_frame_and_its_offset(body, says):
    with pytest.raises(FrameError, match=says):
        decode_frames(body)


def test_a_body_over_the_entry_or_byte_limit_is_refused():
    with pytest.raises(FrameError, match=f"more than {MAX_ENTRIES_PER_REQUEST} entries"):
        decode_frames(encode_frames([b"x"] * (MAX_ENTRIES_PER_REQUEST + 1)))
    with pytest.raises(FrameError, match=f"at most {MAX_REQUEST_BYTES} bytes"):
        decode_frames(encode_frames([b"x" * MAX_REQUEST_BYTES]))
    with pytest.raises(FrameError, match="cannot be empty"):
        encode_frames([b"a", b""])


# ------------------------------------------------------------------ the service


@pytest.fixture
def engine() -> Engine:
    engine = Engine.assemble(memory_settings(), memory_stores(), Runtime())
    engine.tenants.initialize_cluster()
    return engine


def test_entries_are_committed_in_order_at_consecutive_positions_each_with_its_ids(engine):
    body = encode_frames([entry(b"a", 0), entry(b"b", 1), entry(b"later", 2, 1_900_000_000_000)])
    result = engine.produce_many.publish(TOPIC, body)
    assert result.committed == 3
    ledger = engine.topics.get(TOPIC).ledger_id
    assert [r.message_ids for r in result.results if isinstance(r, PublishResult)] == [
        (f"{ledger}:0:-1:-1",), (f"{ledger}:1:-1:-1",), (f"{ledger}:2:-1:-1",)
    ]  # fmt: skip


def test_a_failure_mid_way_keeps_the_entries_before_it_and_reports_the_rest_not_attempted(
    engine,
):
    body = encode_frames([entry(b"a", 0), b"not an entry", entry(b"c", 2)])
    result = engine.produce_many.publish(TOPIC, body)
    first, failed, skipped = result.results
    assert isinstance(first, PublishResult) and first.entry_id == 0
    assert isinstance(failed, EntryFailure) and isinstance(skipped, EntryFailure)
    assert (failed.code, failed.status, failed.attempted) == ("InvalidMessage", 400, True)
    assert (skipped.code, skipped.attempted) == ("ServiceUnitNotReady", False)
    assert "entry 1 before it failed with InvalidMessage" in skipped.message
    assert result.committed == 1
    again = engine.produce_many.publish(TOPIC, encode_frames([entry(b"c", 2)]))
    assert again.results[0].entry_id == 1  # type: ignore[union-attr]


def test_a_failing_first_entry_fails_the_request_and_stores_nothing(engine):
    with pytest.raises(InvalidMessage):
        engine.produce_many.publish(TOPIC, encode_frames([b"not an entry", entry(b"b")]))
    with pytest.raises(InvalidMessage, match="Malformed multi-entry body: frame 0"):
        engine.produce_many.publish(TOPIC, b"\x00\x00\x00\x09abc")
    first = engine.producer.publish(TOPIC, entry(b"first"))
    assert first.entry_id == 0


def test_entries_left_when_the_time_budget_is_spent_are_reported_not_attempted(engine):
    looks = iter([0, 600, 1200])  # the clock at the start, before entry 1, before entry 2
    many = ProduceMany(engine.producer, lambda: next(looks), budget_ms=1000)
    result = many.publish(TOPIC, encode_frames([entry(b"a", 0), entry(b"b", 1), entry(b"c", 2)]))
    assert result.committed == 2
    last = result.results[2]
    assert isinstance(last, EntryFailure) and not last.attempted
    assert "1000 ms commit budget" in last.message


class FailingSecondPublish:
    """A producer whose second publish fails with an unexpected error (a storage fault)."""

    def __init__(self, real) -> None:
        self.real, self.calls = real, 0

    def __getattr__(self, name):
        return getattr(self.real, name)

    def publish(self, topic, entry, **options):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("connection reset by the storage")
        return self.real.publish(topic, entry, **options)


def test_an_unexpected_fault_after_a_commit_is_reported_as_unknown_error_not_a_500(engine):
    many = ProduceMany(FailingSecondPublish(engine.producer), lambda: 0)  # type: ignore[arg-type]
    result = many.publish(TOPIC, encode_frames([entry(b"a", 0), entry(b"b", 1), entry(b"c", 2)]))
    first, failed, skipped = result.results
    assert isinstance(first, PublishResult) and first.entry_id == 0
    assert isinstance(failed, EntryFailure) and (failed.code, failed.status) == (
        "UnknownError",
        500,
    )
    assert isinstance(skipped, EntryFailure) and not skipped.attempted


def test_a_request_takes_the_entry_ids_of_all_its_entries_with_one_sequencer_update(
    engine, monkeypatch
):
    engine.topics.create(TOPIC, 0)
    log = engine.producer._committer._log
    allocations: list[int] = []
    allocate = log.allocate

    def counted(pk, count, *args, **kwargs):
        allocations.append(count)
        return allocate(pk, count, *args, **kwargs)

    monkeypatch.setattr(log, "allocate", counted)
    body = encode_frames([entry(b"a", 0), entry(b"b", 1), entry(b"c", 2)])
    result = engine.produce_many.publish(TOPIC, body)
    assert allocations == [3]
    assert [r.entry_id for r in result.results] == [0, 1, 2]  # type: ignore[union-attr]
    many = engine.produce_many.publish(
        TOPIC, encode_frames([entry(b"m", 3 + i) for i in range(20)])
    )
    assert allocations == [3, 16, 4]  # at most RESERVE_MAX_IDS at a time
    assert [r.entry_id for r in many.results] == list(range(3, 23))  # type: ignore[union-attr]


def test_ids_a_request_took_and_did_not_use_become_holes_at_once(engine):
    engine.topics.create(TOPIC, 0)
    body = encode_frames([entry(b"a", 0), b"not an entry", entry(b"c", 2)])
    assert engine.produce_many.publish(TOPIC, body).committed == 1

    after = engine.producer.publish(TOPIC, entry(b"d", 3))
    key = engine.topics.resolve(TOPIC, create=False).key
    assert after.entry_id == 3  # ids 1 and 2 were the request's, settled as holes
    read = engine.producer._committer._log.read_from(key, 0, 10)
    assert [(e.entry_id, e.hole) for e in read] == [(0, False), (1, True), (2, True), (3, False)]


def test_entries_routed_to_several_partitions_take_their_ids_one_by_one(engine):
    base = TopicName.parse("persistent://public/default/many-partitioned")
    engine.topics.create(base, 2)
    keyed = [encode_entry([EntryMessage(payload=b"x", sequence_id=i, publish_time_ms=1,
                                        key=f"k{i}")], producer_name="p")
             for i in range(6)]  # fmt: skip
    result = engine.produce_many.publish(base, encode_frames(keyed))
    assert result.committed == 6
    per_partition: dict[int, list[int]] = {}
    for r in result.results:
        assert isinstance(r, PublishResult)
        per_partition.setdefault(r.partition, []).append(r.entry_id)
    assert all(ids == list(range(len(ids))) for ids in per_partition.values())  # no holes


def test_a_request_slower_than_half_the_hole_bound_takes_fresh_ids_and_settles_the_old_ones(
    engine,
):
    import dataclasses
    import itertools

    from magnetar_core.domain.sequencing import HOLE_AFTER_MS

    engine.topics.create(TOPIC, 0)
    committer = engine.producer._committer
    ticks = itertools.count(0, 0.35 * HOLE_AFTER_MS)  # each look at the clock: 0.35 bounds on
    committer._rt = dataclasses.replace(committer._rt, monotonic_ms=lambda: next(ticks))
    body = encode_frames([entry(b"a", 0), entry(b"b", 1), entry(b"c", 2)])

    result = engine.produce_many.publish(TOPIC, body)

    ids = [r.entry_id for r in result.results]  # type: ignore[union-attr]
    key = engine.topics.resolve(TOPIC, create=False).key
    read = committer._log.read_from(key, 0, 10)
    # the reservation aged past half the bound after one commit: its ids 1 and 2 are settled
    # at once, by the writer, and the next reservations take one id (what it used)
    assert ids == [0, 3, 4]
    assert [e.entry_id for e in read if e.hole] == [1, 2]
    assert committer._log.head(key) == 4


def test_on_a_slow_log_a_request_takes_ids_at_the_pace_it_commits_them(engine):
    """A log slow enough that requests outlive their reservations: the committer then takes
    only as many ids at a time as it used in the reservation that aged, one more after one
    used up in time, so the ids settled as holes (one write each) stay few and do not grow
    with every fresh reservation as the log slows down (the load that stalled ``perf cost``'s
    fan-out runs: before, 56 holes for each request of 16 entries here)."""
    import dataclasses
    import itertools

    from magnetar_core.domain.sequencing import HOLE_AFTER_MS

    engine.topics.create(TOPIC, 0)
    committer = engine.producer._committer
    ticks = itertools.count(0, 0.2 * HOLE_AFTER_MS)  # each look at the clock: 0.2 bounds on
    committer._rt = dataclasses.replace(committer._rt, monotonic_ms=lambda: next(ticks))
    key = engine.topics.resolve(TOPIC, create=False).key

    def holes() -> int:
        return sum(e.hole for e in committer._log.read_from(key, 0, 1000))

    first = engine.produce_many.publish(TOPIC, encode_frames([entry(b"m", i) for i in range(16)]))
    after_first = holes()
    second = engine.produce_many.publish(
        TOPIC, encode_frames([entry(b"m", 16 + i) for i in range(16)])
    )

    assert first.committed == second.committed == 16
    # the first reservation (16 ids) aged after 2 commits: its 14 others, then a probe of
    # one id more now and then
    assert 14 <= after_first <= 17
    assert holes() - after_first <= 4  # the next request starts at the learnt pace
