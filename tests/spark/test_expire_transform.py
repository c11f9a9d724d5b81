"""The expire job's pure transforms on generated rows: TTL, holders, retention, objects.

The tests that look only at which entries a run with the default parameters deletes, at its
cursor writes or at its TTL marks declare their ledger with ``@deletes(...)``: all of them
are planned in one ``transform`` (each on a ledger of its own, as a run plans every ledger of
the stack at once; the plan is per ledger), a Spark query for each of those three instead of
one each (a query plans and runs in about half a CPU-second here, of which a few rows are
nothing). The tests that look at ``plan_cursors``' rows declare their cursors with
``@plans_cursors(...)``, planned together in the same way (``expire_rows``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from expire_rows import (
    DEFAULT_POLICIES,
    KIB,
    MINUTE,
    NOW,
    OTHER,
    PK,
    SCENARIOS,
    cursor,
    deletes,
    ids,
    item,
    plan_cursor_scenarios,
    plan_scenarios,
    plans_cursors,
    policy,
)

from magnetar_jobs.catalog import index_schema
from magnetar_jobs.expire_transform import (
    CURSOR_SCHEMA,
    OBJECT_SCHEMA,
    POLICY_SCHEMA,
    ExpireParams,
    dead_ledger_entries,
    delete_bounds,
    objects_to_trash,
    orphans,
    plan_cursors,
    transform,
)


@pytest.fixture
def frames(spark):
    def build(items, cursors=(), policies=DEFAULT_POLICIES):
        return (
            spark.createDataFrame(list(items), index_schema()),
            spark.createDataFrame(list(cursors), CURSOR_SCHEMA),
            spark.createDataFrame(list(policies), POLICY_SCHEMA),
        )

    return build


@pytest.fixture(scope="module")
def shared_run(spark) -> tuple[dict, dict, dict]:
    """Every declared scenario planned at once (``plan_scenarios``)."""
    return plan_scenarios(spark)


def _declared(request, label: str = "") -> tuple[str, str]:
    key = request.node.originalname, label
    assert key in SCENARIOS, f"{key} declared no scenario with @deletes"
    return key


@pytest.fixture
def deleted(request, shared_run) -> Callable[[str], list]:
    """``deleted(label="")``: sorted ``(pk, eid)`` of what the shared run deletes of the
    test's scenario."""
    return lambda label="": sorted(shared_run[0][_declared(request, label)])


@pytest.fixture
def cursor_writes(request, shared_run) -> list[dict]:
    """The cursor actions of the shared run for the test's scenario."""
    return shared_run[1][_declared(request)]


@pytest.fixture
def ttl_moves(request, shared_run) -> list[tuple]:
    """Sorted ``(pk, sub, ttl_md)`` of the shared run's TTL marks for the test's scenario."""
    return sorted(shared_run[2][_declared(request)])


@pytest.fixture(scope="module")
def shared_cursor_plans(spark) -> dict:
    """Every ``@plans_cursors`` declaration planned at once (``plan_cursor_scenarios``)."""
    return plan_cursor_scenarios(spark)


@pytest.fixture
def planned(request, shared_cursor_plans) -> dict:
    """Subscription -> the ``plan_cursors`` row of the test's declared cursors."""
    return shared_cursor_plans[request.node.originalname]


# -- holders ---------------------------------------------------------------------------------


@deletes([item(e) for e in range(10)], [cursor("s1", 6), cursor("s2", 4)])
def test_entries_every_durable_cursor_acknowledged_go_and_the_rest_stay(deleted):
    assert deleted() == ids(0, 1, 2, 3, 4)


@deletes([item(e) for e in range(10)], [cursor("s1", 9)])
def test_the_last_index_item_is_never_deleted(deleted):
    assert deleted() == ids(*range(9))


@deletes([item(e) for e in range(4)])
def test_without_subscriptions_everything_but_the_head_goes(deleted):
    assert deleted() == ids(0, 1, 2)


@deletes([item(e) for e in range(6)], [cursor("s1", 1, seen=())])
def test_a_durable_cursor_without_consumers_still_holds_its_backlog(deleted):
    assert deleted() == ids(0, 1)


@deletes(
    [item(e) for e in range(10)],
    [cursor("s1", 8), cursor("reader", 3, durable=False, seen=(NOW - 1000,))],
)
def test_a_live_reader_holds_what_it_has_not_read(deleted):
    assert deleted() == ids(0, 1, 2, 3)


@deletes(
    [item(e) for e in range(10)],
    [cursor("s1", 8), cursor("reader", 3, durable=False, seen=(NOW - 60_001,))],
)
def test_a_reader_whose_lease_lapsed_holds_nothing_and_is_dropped(deleted, cursor_writes):
    assert ExpireParams(NOW).consumer_lease_ms == 60_000  # the shared run's: 60,001 ms lapsed
    assert deleted() == ids(*range(9))
    assert cursor_writes == [
        {"pk": PK, "sub": "reader", "ver": 3, "ttl_md": None, "lapsed": True, "drop": True}
    ]


LAPSING = [
    cursor("gone", 2, seen=(NOW - 70_000, NOW - 10)),
    cursor("fine", 2, seen=(NOW - 10,)),
    cursor("idle", 2, seen=()),
]


@plans_cursors(LAPSING)
@deletes([], LAPSING)
def test_durable_cursors_with_lapsed_consumers_are_listed_for_expiry_not_dropped(
    planned, cursor_writes
):
    assert ExpireParams(NOW).consumer_lease_ms == 60_000  # the shared plans': "gone" lapsed
    rows = {sub: (r.live, r.lapsed, r.drop, r.holds) for sub, r in planned.items()}
    assert rows == {
        "gone": (1, True, False, True),
        "fine": (1, False, False, True),
        "idle": (0, False, False, True),
    }
    assert [w["sub"] for w in cursor_writes] == ["gone"]


DELAYING = [cursor("shared", 5, delayed=[(7, 8)]), cursor("other", 9)]


@plans_cursors(DELAYING)
@deletes([item(e) for e in range(10)], DELAYING)
def test_delayed_entries_stay_and_so_does_everything_after_the_first(deleted, planned):
    assert deleted() == ids(*range(6))
    assert {sub: r.first_delayed for sub, r in planned.items()} == {"shared": 7, "other": None}


@plans_cursors([cursor("s", 2, delayed=[(4, 6), (9, 9)])], marks=[(PK, "s", 5)])
def test_the_first_delayed_entry_is_the_smallest_above_the_planned_mark_delete(planned):
    assert [(r.planned_md, r.first_delayed) for r in planned.values()] == [(5, 6)]


# -- TTL -------------------------------------------------------------------------------------


@deletes(
    [item(e, NOW - 10 * MINUTE) for e in range(5)] + [item(e) for e in range(5, 10)],
    [cursor("behind", -1), cursor("ahead", 7), cursor("reader", -1, durable=False, seen=())],
    [policy(ttl=300)],
)
def test_ttl_moves_durable_cursors_to_the_newest_entry_older_than_the_ttl(ttl_moves, deleted):
    assert ttl_moves == [(PK, "behind", 4)]
    assert deleted() == ids(0, 1, 2, 3, 4)


@deletes(
    [item(0, NOW - 300_001), item(1, NOW - 300_000), item(2, NOW)],
    [cursor("s", -1)],
    [policy(ttl=300)],
)
def test_ttl_needs_the_publish_time_strictly_older_than_now_minus_ttl(ttl_moves):
    assert ttl_moves == [(PK, "s", 0)]


@deletes(
    [item(0, NOW - 3_600_000), item(1, NOW), item(2, 0, n=0, obj=""), item(3, NOW)],
    [cursor("s", -1)],
    [policy(ttl=60)],
)
def test_ttl_never_counts_markers_as_expired(ttl_moves):
    assert ttl_moves == [(PK, "s", 0)]


@deletes([item(e, NOW - 3_600_000) for e in range(3)], [cursor("s", -1)], [policy(ttl=0)])
def test_without_ttl_no_cursor_moves(ttl_moves, deleted):
    assert ttl_moves == []
    assert deleted() == []


@deletes(
    [item(e, NOW - 10 * MINUTE) for e in range(6)] + [item(6, NOW)],
    [cursor("shared", 1, delayed=[(3, 3)])],
    [policy(ttl=60)],
)
def test_ttl_past_a_delayed_entry_expires_it_too(deleted):
    assert deleted() == ids(*range(6))


# -- retention -------------------------------------------------------------------------------


@deletes(
    [item(e, NOW - 120 * MINUTE) for e in range(4)]
    + [item(e, NOW - 30 * MINUTE) for e in range(4, 8)],
    [cursor("s", 7)],
    [policy(minutes=60, mb=-1)],
)
def test_retention_time_keeps_acknowledged_entries_younger_than_it(deleted):
    assert deleted() == ids(0, 1, 2, 3)


@deletes(
    [item(e, length=300 * KIB) for e in range(10)], [cursor("s", 9)], [policy(minutes=-1, mb=1)]
)
def test_retention_size_keeps_the_newest_entries_up_to_the_limit(deleted):
    # 7, 8, 9 weigh 900 KiB <= 1 MiB; adding 6 makes 1200 KiB
    assert deleted() == ids(*range(7))


RETENTION_ITEMS = [item(e, NOW - 120 * MINUTE, length=300 * KIB) for e in range(2)] + [
    item(e, NOW - MINUTE, length=300 * KIB) for e in range(2, 10)
]


@deletes(RETENTION_ITEMS, [cursor("s", 9)], [policy(minutes=60, mb=10)], label="time")
@deletes(RETENTION_ITEMS, [cursor("s", 9)], [policy(minutes=600, mb=1)], label="size")
def test_an_entry_exceeding_either_retention_limit_goes(deleted):
    assert deleted("time") == ids(0, 1)
    assert deleted("size") == ids(*range(7))


@deletes([item(e, 1) for e in range(5)], [cursor("s", 4)], [policy(minutes=-1, mb=-1)])
def test_infinite_retention_keeps_everything_acknowledged(deleted):
    assert deleted() == []


@deletes(
    [item(e, NOW - 120 * MINUTE) for e in range(6)], [cursor("s", 2)], [policy(minutes=60, mb=-1)]
)
def test_retention_never_keeps_unacknowledged_entries_from_going_only_holds_them(deleted):
    assert deleted() == ids(0, 1, 2)


@deletes(
    [item(e, NOW - (MINUTE if e == 2 else 120 * MINUTE)) for e in range(5)],
    [cursor("s", 4)],
    [policy(minutes=60, mb=-1)],
)
def test_deletion_is_a_prefix_stopping_at_the_first_entry_retention_keeps(deleted):
    assert deleted() == ids(0, 1)


def test_bounds_name_the_first_kept_and_the_last_entry_per_ledger(spark, frames):
    index, cursors, policies = frames(
        [item(e) for e in range(5)] + [item(e, pk=OTHER) for e in range(3)],
        [cursor("s", 1), cursor("s", 2, pk=OTHER)],
        [policy(), policy(OTHER)],
    )
    plan = plan_cursors(
        cursors, spark.createDataFrame([], "pk string, sub string, ttl_md long"), ExpireParams(NOW)
    )
    bounds = delete_bounds(index, plan, policies, NOW)
    assert sorted(tuple(r) for r in bounds.collect()) == [(PK, 2, 4), (OTHER, 2, 2)]


# -- objects ---------------------------------------------------------------------------------


def test_a_segment_goes_to_trash_only_once_none_of_its_entries_remains(spark, frames):
    items = [item(e, obj="segments/a/1/0-3", off=100 * e) for e in range(4)]
    items += [item(e, obj="segments/a/1/4-7", off=100 * (e - 4)) for e in range(4, 8)]
    index, cursors, policies = frames(items, [cursor("s", 5)])
    plan = transform(index, cursors, policies, ExpireParams(NOW))
    assert sorted(r.eid for r in plan.deleted.collect()) == [0, 1, 2, 3, 4, 5]
    assert [tuple(r) for r in plan.trash.collect()] == [("segments/a/1/0-3", 400, [PK])]


def test_inline_entries_are_deleted_with_nothing_to_trash_and_are_no_orphan_references(
    spark, frames
):
    inline = [item(e, obj="")[:11] + (f"bytes {e}".encode(),) for e in range(3)]
    index, cursors, policies = frames(inline + [item(3), item(4)], [cursor("s", 3)])
    stored = f"entries/{PK.split('|')[0]}/3"
    objects = spark.createDataFrame(
        [(stored, 100, NOW - 60 * MINUTE)], "key string, size long, modified_ms long"
    )
    params = ExpireParams(NOW, orphan_age_ms=MINUTE)
    plan = transform(index, cursors, policies, params, objects=objects)
    assert sorted(r.eid for r in plan.deleted.collect()) == [0, 1, 2, 3]
    assert [tuple(r) for r in plan.trash.collect()] == [(stored, 100, [PK])]  # no "" key
    assert plan.orphans is not None and plan.orphans.collect() == []


def test_objects_to_trash_ignores_markers_without_objects(spark, frames):
    index, _, _ = frames([item(0, obj=""), item(1), item(2)])
    deleted = index.where("eid < 2").select("pk", "eid", "obj", "off", "len")
    assert sorted(r.obj for r in objects_to_trash(index, deleted).collect()) == [
        f"entries/{PK.split('|')[0]}/1"
    ]


def test_orphans_are_old_objects_nothing_references_or_trashes(spark, frames):
    index, _, _ = frames([item(0, obj="entries/x/used")])
    hour = 3_600_000
    objects = spark.createDataFrame(
        [
            ("entries/x/used", 10, NOW - 2 * hour),
            ("entries/x/lost", 20, NOW - 2 * hour),
            ("entries/x/young", 30, NOW - hour + 1),
            ("entries/x/trashed", 40, NOW - 2 * hour),
        ],
        OBJECT_SCHEMA,
    )
    trashed = spark.createDataFrame([("entries/x/trashed",)], "key string")
    found = orphans(objects, index, trashed, ExpireParams(NOW, orphan_age_ms=hour))
    assert [tuple(r) for r in found.collect()] == [("entries/x/lost", 20)]


def test_dead_ledgers_lose_every_item_but_the_fence(spark, frames):
    dead = "persistent://t/ns/gone|3"
    index, _, _ = frames(
        [item(e, pk=dead) for e in range(3)]
        + [item(3, 0, obj="", n=0, fence=True, pk=dead)]
        + [item(e) for e in range(2)]
    )
    keys = spark.createDataFrame([(dead,)], "pk string")
    rows = dead_ledger_entries(index, keys).collect()
    assert sorted((r.pk, r.eid) for r in rows) == [(dead, 0), (dead, 1), (dead, 2)]


def test_the_whole_plan_of_a_run(spark, frames):
    dead = "persistent://t/ns/gone|3"
    hour = 3_600_000
    index, cursors, policies = frames(
        [item(e) for e in range(4)]
        + [item(0, pk=dead), item(1, 0, obj="", n=0, fence=True, pk=dead)],
        [cursor("s", 1), cursor("r", 0, durable=False, seen=())],
    )
    objects = spark.createDataFrame(
        [(f"entries/{PK.split('|')[0]}/{e}", 100, NOW - 2 * hour) for e in range(4)]
        + [(f"entries/{dead.split('|')[0]}/0", 100, NOW - 2 * hour), ("entries/lost", 5, 0)],
        OBJECT_SCHEMA,
    )
    plan = transform(
        index,
        cursors,
        policies,
        ExpireParams(NOW),
        dead_keys=spark.createDataFrame([(dead,)], "pk string"),
        objects=objects,
        trashed=spark.createDataFrame([], "key string"),
    )
    assert sorted((r.pk, r.eid) for r in plan.deleted.collect()) == ids(0, 1)
    assert sorted((r.pk, r.eid) for r in plan.dead.collect()) == [(dead, 0)]
    assert sorted(r.obj for r in plan.trash.collect()) == sorted(
        [
            f"entries/{PK.split('|')[0]}/0",
            f"entries/{PK.split('|')[0]}/1",
            f"entries/{dead.split('|')[0]}/0",
        ]
    )
    assert [r.key for r in plan.orphans.collect()] == ["entries/lost"]
    assert [(r.sub, r.drop) for r in plan.cursors.collect()] == [("r", True)]
