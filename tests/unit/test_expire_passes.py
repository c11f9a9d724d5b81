"""When an expire run is a full pass (``--full-pass``, ``--full-pass-every-ms``)."""

from __future__ import annotations

import expire
import pytest

from magnetar_jobs.common import parse_args
from magnetar_jobs.expire_incremental import full_pass_due

DAY_MS = 86_400_000


def test_a_full_pass_is_due_once_the_last_one_is_a_day_old_or_none_was_recorded():
    assert full_pass_due(None, 5 * DAY_MS, DAY_MS)
    assert full_pass_due(4 * DAY_MS, 5 * DAY_MS, DAY_MS)
    assert not full_pass_due(4 * DAY_MS + 1, 5 * DAY_MS, DAY_MS)


def test_a_zero_period_never_makes_a_run_full_by_itself():
    assert not full_pass_due(None, 5 * DAY_MS, 0)


@pytest.mark.parametrize(("value", "full"), [("true", True), ("FALSE", False), ("no", False)])
def test_full_pass_true_or_false_decides_without_reading_the_state(value, full):
    args = parse_args(["--bucket", "b", "--table-prefix", "p", "--full-pass", value])
    assert expire.is_full_pass(args, 0, narrowed=False) is full


def test_a_narrowed_run_in_auto_mode_is_incremental():
    args = parse_args(["--bucket", "b", "--table-prefix", "p", "--namespace", "t/ns"])
    assert expire.is_full_pass(args, 0, narrowed=True) is False


def test_an_unknown_full_pass_mode_is_refused_before_any_work():
    with pytest.raises(ValueError, match="--full-pass takes auto, true or false, not 'sometimes'"):
        expire.main(["--bucket", "b", "--table-prefix", "p", "--full-pass", "sometimes"])
