"""``magnetar verify``'s report: the table for people, the JSON for scripts, the exit status."""

from __future__ import annotations

import json

import pytest

from magnetar.cli.verify.report import CheckResult, Report, Status


def _report(*rows: CheckResult) -> Report:
    return Report("http://svc", "persistent://public/default/verify-ab-", rows, 5300)


PASSED = CheckResult("produce-consume-ack", Status.PASSED, 412, "3 sent, 3 received")
SKIPPED = CheckResult("auth-no-token-401", Status.SKIPPED, 7, "authentication is off")
FAILED = CheckResult("dead-letter", Status.FAILED, 30000, "nothing came within 30000 ms")


def test_a_run_where_every_check_passed_or_was_skipped_exits_0():
    report = _report(PASSED, SKIPPED)
    assert (report.ok, report.exit_status()) == (True, 0)
    assert report.summary().endswith("every check held")


def test_a_single_failed_check_makes_the_run_exit_1_and_says_so():
    report = _report(PASSED, SKIPPED, FAILED)
    assert (report.ok, report.exit_status()) == (False, 1)
    assert "1 passed, 1 skipped, 1 failed in 5.3 s" in report.summary()
    assert report.summary().endswith("the deployment does NOT hold")


def test_a_run_without_any_check_does_not_count_as_held():
    assert _report().exit_status() == 1


def test_a_skip_without_a_reason_is_refused():
    with pytest.raises(ValueError, match="needs a reason"):
        CheckResult("trigger-webhook", Status.SKIPPED, 1, "  ")


def test_the_table_has_one_row_per_check_in_order_with_times_right_aligned_then_the_summary():
    lines = _report(PASSED, SKIPPED, FAILED).render_table().splitlines()
    assert lines[0].split() == ["CHECK", "RESULT", "TIME", "MS", "DETAIL"]
    assert [line.split()[:3] for line in lines[1:4]] == [
        ["produce-consume-ack", "passed", "412"],
        ["auth-no-token-401", "skipped", "7"],
        ["dead-letter", "failed", "30000"],
    ]
    ends = {line.index(str(r.time_ms)) + len(str(r.time_ms)) for line, r in zip(lines[1:4], (PASSED, SKIPPED, FAILED), strict=True)}  # fmt: skip
    assert len(ends) == 1  # the time column ends at one place
    assert lines[1].endswith("3 sent, 3 received") and lines[4] == ""
    assert lines[5].startswith("1 passed, 1 skipped, 1 failed")


def test_the_json_report_holds_every_row_the_counts_and_the_verdict():
    report = json.loads(_report(PASSED, SKIPPED, FAILED).render_json())
    assert report["ok"] is False
    assert (report["passed"], report["skipped"], report["failed"], report["timeMs"]) == (
        1,
        1,
        1,
        5300,
    )
    assert report["serviceUrl"] == "http://svc"
    assert report["checks"][1] == {"name": "auth-no-token-401", "status": "skipped", "timeMs": 7,
                                   "detail": "authentication is off"}  # fmt: skip
