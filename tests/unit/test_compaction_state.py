"""The $compaction pointer: run lifecycle, retired ledgers and the item codec (pure)."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.aws.compaction import (
    compacted_item,
    kept_of,
    pointer_from_item,
    pointer_to_item,
)
from magnetar_core.domain.compaction import (
    ERROR,
    NOT_RUN,
    RUNNING,
    SUCCESS,
    CompactionInProgress,
    CompactionState,
    Retired,
    compacted_ledger_key,
    compacted_owner,
    ledger_segment_prefix,
)

STALE_MS = 1000


def test_a_second_run_while_one_runs_is_refused_with_pulsars_message():
    state = CompactionState()
    state.start("r1", "L1", now_ms=0, stale_after_ms=STALE_MS)
    with pytest.raises(CompactionInProgress, match="^Compaction already in progress$") as info:
        state.start("r2", "L2", now_ms=10, stale_after_ms=STALE_MS)
    assert (info.value.status, info.value.code) == (409, "Conflict")
    state.start("r1", "L1", now_ms=20, stale_after_ms=STALE_MS)  # the same run: no change
    assert (state.status, state.run_id, state.started_ms) == (RUNNING, "r1", 0)


def test_a_run_that_stopped_reporting_is_taken_over_and_its_ledger_retired():
    state = CompactionState()
    state.start("r1", "L1", now_ms=0, stale_after_ms=STALE_MS)
    state.start("r2", "L2", now_ms=STALE_MS, stale_after_ms=STALE_MS)
    assert (state.run_id, state.run_ledger) == ("r2", "L2")
    assert state.retired == [Retired("L1", STALE_MS)]


def test_success_switches_the_ledger_and_retires_the_previous_one():
    state = CompactionState()
    state.start("r1", "L1", 0, STALE_MS)
    state.succeed("L1", horizon=7, now_ms=5)
    assert (state.status, state.ledger, state.horizon, state.retired) == (SUCCESS, "L1", 7, [])
    state.start("r2", "L2", 10, STALE_MS)
    state.succeed("L2", horizon=9, now_ms=15)
    assert (state.ledger, state.retired) == ("L2", [Retired("L1", 15)])
    assert state.view() == {"status": SUCCESS, "lastError": ""}


def test_a_failed_run_keeps_the_previous_view_and_retires_its_own_partial_ledger():
    state = CompactionState(status=SUCCESS, horizon=3, ledger="L1")
    state.start("r2", "L2", 0, STALE_MS)
    state.fail("boom", now_ms=4)
    assert (state.status, state.ledger, state.horizon) == (ERROR, "L1", 3)
    assert state.view() == {"status": ERROR, "lastError": "boom"}
    assert state.retired == [Retired("L2", 4)]


def test_retired_ledgers_are_due_only_once_trashed_and_past_the_grace_period():
    state = CompactionState(retired=[Retired("A", 0), Retired("B", 50)])
    assert state.due_retired(now_ms=100, grace_ms=60) == []
    state.mark_trashed(["A", "B"])
    assert state.due_retired(now_ms=100, grace_ms=60) == ["A"]
    state.forget_retired(["A"])
    assert state.retired == [Retired("B", 50, trashed=True)]


def test_the_pointer_item_round_trips():
    state = CompactionState(
        status=ERROR,
        last_error="x",
        horizon=12,
        ledger="L",
        run_id="r",
        run_ledger="LR",
        started_ms=1,
        finished_ms=2,
        retired=[Retired("old", 3, True)],
        version=4,
    )
    item = pointer_to_item("t|1", state)
    assert (item["sub"]["S"], item["ver"]["N"]) == ("$compaction", "5")
    back = pointer_from_item(item)
    assert back == CompactionState(**{**state.__dict__, "version": 5})
    assert pointer_from_item(pointer_to_item("t|1", CompactionState())).status == NOT_RUN


def test_compacted_ledger_keys_name_their_owner_and_segment_prefix():
    ledger = compacted_ledger_key("persistent://public/default/t-partition-1|3", "run9")
    assert compacted_owner(ledger) == "persistent://public/default/t-partition-1|3"
    assert compacted_owner("persistent://public/default/t|3") is None
    assert (
        ledger_segment_prefix(ledger) == "compacted/persistent/public/default/t-partition-1/3/run9/"
    )


def test_a_compacted_item_addresses_the_copy_and_names_only_a_partial_kept_set():
    source = {"pk": {"S": "t|1"}, "eid": {"N": "4"}, "n": {"N": "3"}, "obj": {"S": "entries/a"}}
    partial = compacted_item(source, "L", "compacted/s", 100, 50, [2, 0])
    assert (partial["pk"], partial["eid"], partial["obj"]) == (
        {"S": "L"},
        {"N": "4"},
        {"S": "compacted/s"},
    )
    assert (partial["off"], partial["len"], kept_of(partial)) == ({"N": "100"}, {"N": "50"}, (0, 2))
    assert kept_of(compacted_item(source, "L", "compacted/s", 0, 50, [0, 1, 2])) is None
