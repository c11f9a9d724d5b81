"""The rows of the expire transform's tests (tests/spark/test_expire_transform.py): index
items, cursors and policies as the catalog's schemas order them, the scenarios the tests
declare with ``@deletes``, planned together by ``plan_scenarios`` (one Spark query for what
they delete, one for the cursor writes, one for the TTL marks), and the cursors they declare
with ``@plans_cursors``, planned together by ``plan_cursor_scenarios`` (one query). Each
scenario's rows get ledger keys of their own (``<test>#<label>#<pk>``): the plan is per
ledger, so a scenario planned beside others is planned as it would be alone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from magnetar_jobs.catalog import index_schema
from magnetar_jobs.expire_transform import (
    CURSOR_SCHEMA,
    POLICY_SCHEMA,
    ExpireParams,
    plan_cursors,
    transform,
    ttl_marks,
)

NOW = 1_700_000_000_000
MINUTE = 60_000
PK = "persistent://t/ns/a|1"
OTHER = "persistent://t/ns/b|1"
KIB = 1024


def item(eid, pt1=NOW - MINUTE, *, obj=None, off=0, length=100, n=1, fence=False, pk=PK):
    """One index row (``catalog.INDEX_COLUMNS`` order)."""
    obj = f"entries/{pk.split('|')[0]}/{eid}" if obj is None else obj
    return (pk, eid, obj, off, length, n, pt1, pt1, 0, fence, False, None)


def cursor(sub, md, *, durable=True, seen=(NOW,), delayed=(), ver=3, pk=PK):
    return (pk, sub, durable, md, md + 1, ver, list(seen), [(lo, hi) for lo, hi in delayed])


def policy(pk=PK, ttl=0, minutes=0, mb=0):
    return (pk, ttl, minutes, mb)


DEFAULT_POLICIES = (policy(),)


Scenario = tuple[list[tuple], list[tuple], list[tuple]]
SCENARIOS: dict[tuple[str, str], Scenario] = {}
"""(test name, label) -> the index items, cursors and policies of its ledgers."""
SEP = "#"  # test name, label and the ledger key in one ledger key: "<test>#<label>#<pk>"


def deletes(items, cursors=(), policies=DEFAULT_POLICIES, label: str = "") -> Callable:
    """Declare a test's ledgers for the module's shared run (see the module docstring)."""

    def register(test: Callable) -> Callable:
        SCENARIOS[test.__name__, label] = (list(items), list(cursors), list(policies))
        return test

    return register


def _owned(rows: list[tuple], owner: str) -> list[tuple]:
    return [(f"{owner}{SEP}{row[0]}", *row[1:]) for row in rows]


def ids(*eids, pk=PK):
    return [(pk, e) for e in eids]


def plan_scenarios(spark: Any) -> tuple[dict, dict, dict]:
    """Every declared scenario planned at once: ``(deleted, cursor actions, TTL marks)``,
    each keyed by (test name, label), with the scenario's own ledger keys."""
    index, cursors, policies = [], [], []
    for (test, label), (items, cursor_rows, policy_rows) in SCENARIOS.items():
        owner = f"{test}{SEP}{label}"
        index += _owned(items, owner)
        cursors += _owned(cursor_rows, owner)
        policies += _owned(policy_rows, owner)
    frames = (
        spark.createDataFrame(index, index_schema()),
        spark.createDataFrame(cursors, CURSOR_SCHEMA),
        spark.createDataFrame(policies, POLICY_SCHEMA),
    )
    plan = transform(*frames, ExpireParams(NOW))
    deleted: dict[tuple[str, str], list] = defaultdict(list)
    for r in plan.deleted.collect():
        test, label, pk = r.pk.split(SEP)
        deleted[test, label].append((pk, r.eid))
    actions: dict[tuple[str, str], list] = defaultdict(list)
    for r in plan.cursors.collect():
        test, label, pk = r.pk.split(SEP)
        actions[test, label].append({**r.asDict(), "pk": pk})
    marks: dict[tuple[str, str], list] = defaultdict(list)
    for r in ttl_marks(*frames, NOW).collect():
        test, label, pk = r.pk.split(SEP)
        marks[test, label].append((pk, r.sub, r.ttl_md))
    return deleted, actions, marks


CURSOR_PLANS: dict[str, tuple[list[tuple], list[tuple]]] = {}
"""test name -> the cursors and TTL marks (``(pk, sub, ttl_md)``) it declared."""


def plans_cursors(cursors, marks=()) -> Callable:
    """Declare a test's cursors (and TTL marks) for the module's shared ``plan_cursors``
    (``ExpireParams(NOW)``: a 60 s consumer lease)."""

    def register(test: Callable) -> Callable:
        CURSOR_PLANS[test.__name__] = (list(cursors), list(marks))
        return test

    return register


def plan_cursor_scenarios(spark: Any) -> dict[str, dict[str, Any]]:
    """Every declared cursor scenario planned at once (``plan_cursors``): test name ->
    subscription -> its planned row (a ``Row``; its ``pk`` keeps the test name in front)."""
    cursors, marks = [], []
    for test, (cursor_rows, mark_rows) in CURSOR_PLANS.items():
        cursors += _owned(cursor_rows, f"{test}{SEP}")
        marks += _owned(mark_rows, f"{test}{SEP}")
    plan = plan_cursors(
        spark.createDataFrame(cursors, CURSOR_SCHEMA),
        spark.createDataFrame(marks, "pk string, sub string, ttl_md long"),
        ExpireParams(NOW),
    )
    planned: dict[str, dict[str, Any]] = defaultdict(dict)
    for r in plan.collect():
        test, _, _ = r.pk.split(SEP)
        planned[test][r.sub] = r
    return planned
