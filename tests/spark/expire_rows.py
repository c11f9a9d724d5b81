"""The rows of the expire transform's tests (tests/spark/test_expire_transform.py): index
items, cursors and policies as the catalog's schemas order them, and the scenarios the tests
declare with ``@deletes``, planned together by ``plan_scenarios`` (one Spark query for all)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from magnetar_jobs.catalog import index_schema
from magnetar_jobs.expire_transform import CURSOR_SCHEMA, POLICY_SCHEMA, ExpireParams, transform

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


def plan_scenarios(spark: Any) -> tuple[dict, dict]:
    """Every declared scenario planned at once: ``(deleted, cursor actions)``, each keyed by
    (test name, label), with the scenario's own ledger keys."""
    index, cursors, policies = [], [], []
    for (test, label), (items, cursor_rows, policy_rows) in SCENARIOS.items():
        owner = f"{test}{SEP}{label}"
        index += _owned(items, owner)
        cursors += _owned(cursor_rows, owner)
        policies += _owned(policy_rows, owner)
    plan = transform(
        spark.createDataFrame(index, index_schema()),
        spark.createDataFrame(cursors, CURSOR_SCHEMA),
        spark.createDataFrame(policies, POLICY_SCHEMA),
        ExpireParams(NOW),
    )
    deleted: dict[tuple[str, str], list] = defaultdict(list)
    for r in plan.deleted.collect():
        test, label, pk = r.pk.split(SEP)
        deleted[test, label].append((pk, r.eid))
    actions: dict[tuple[str, str], list] = defaultdict(list)
    for r in plan.cursors.collect():
        test, label, pk = r.pk.split(SEP)
        actions[test, label].append({**r.asDict(), "pk": pk})
    return deleted, actions
