"""``magnetar verify``'s runner: each check bounded, the essential check first, the rows in the
checks' order, cleanup last; and the webhook check's pieces (its server, the signature)."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time

import pytest
import requests

from magnetar.cli.verify import runner
from magnetar.cli.verify.context import CheckFailed, CheckSkipped, Deadline, VerifyContext
from magnetar.cli.verify.report import Status
from magnetar.cli.verify.webhook import Call, WebhookServer, on_this_machine, signed

CTX = VerifyContext(client=None, service=None, namespace="public/default", run_id="r1")  # type: ignore[arg-type]


def spec(name: str, outcome, essential: bool = False) -> runner.CheckSpec:
    def run(ctx, deadline):
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome(deadline) if callable(outcome) else outcome

    return runner.CheckSpec(name, run, essential)


def names_and_statuses(results):
    return [(r.name, r.status) for r in results]


def test_each_check_becomes_a_row_passed_skipped_or_failed_with_what_it_said():
    checks = [spec("a", "held"), spec("b", CheckSkipped("off here")), spec("c", CheckFailed("broke")),
              spec("d", KeyError("boom"))]  # fmt: skip
    results = runner.run_checks(CTX, Deadline(10), 5, checks, cleanup=spec("cleanup", "clean"))
    assert names_and_statuses(results) == [
        ("a", Status.PASSED), ("b", Status.SKIPPED), ("c", Status.FAILED), ("d", Status.FAILED),
        ("cleanup", Status.PASSED),
    ]  # fmt: skip
    assert [r.detail for r in results] == ["held", "off here", "broke", "KeyError: 'boom'", "clean"]


def test_a_check_still_running_past_its_bound_fails_and_the_others_still_report(monkeypatch):
    monkeypatch.setattr(runner, "JOIN_GRACE_S", 0.05)
    release = threading.Event()
    checks = [spec("hangs", lambda d: release.wait(10) and "late"), spec("quick", "held")]
    started = time.monotonic()
    results = runner.run_checks(CTX, Deadline(10), 0.1, checks, cleanup=None)
    release.set()
    assert names_and_statuses(results) == [("hangs", Status.FAILED), ("quick", Status.PASSED)]
    assert results[0].detail == "did not finish within its bound of 0.1 s"
    assert time.monotonic() - started < 5


def test_checks_run_at_once_after_the_essential_one_and_keep_their_order_in_the_rows():
    both = threading.Barrier(2, timeout=5)  # only passes when the two run at the same time
    checks = [spec("first", "up", essential=True),
              spec("x", lambda d: both.wait() is not None and "x"),
              spec("y", lambda d: both.wait() is not None and "y")]  # fmt: skip
    results = runner.run_checks(CTX, Deadline(10), 5, checks, cleanup=None)
    assert names_and_statuses(results) == [("first", Status.PASSED), ("x", Status.PASSED), ("y", Status.PASSED)]  # fmt: skip


def test_sequential_checks_never_overlap():
    second_started = threading.Event()

    def first(deadline):
        if second_started.wait(0.2):  # run at once, the second would start meanwhile
            raise CheckFailed("the second check started while the first ran")
        return "alone"

    checks = [spec("first", first), spec("second", lambda d: second_started.set() or "second")]
    results = runner.run_checks(CTX, Deadline(10), 5, checks, cleanup=None, concurrent=False)
    assert [(r.status, r.detail) for r in results] == [(Status.PASSED, "alone"), (Status.PASSED, "second")]  # fmt: skip


def test_when_the_essential_check_fails_the_others_do_not_run_and_nothing_is_cleaned():
    ran: list[str] = []
    checks = [spec("service", CheckFailed("no answer"), essential=True),
              spec("later", lambda d: ran.append("later") or "ran")]  # fmt: skip
    results = runner.run_checks(CTX, Deadline(10), 5, checks, cleanup=spec("cleanup", "clean"))
    assert ran == []
    assert [(r.name, r.status, r.detail) for r in results] == [
        ("service", Status.FAILED, "no answer"),
        ("later", Status.FAILED, "not run: the service check failed"),
        ("cleanup", Status.SKIPPED, "nothing was created: an essential check failed"),
    ]


def test_checks_that_would_start_after_the_overall_bound_fail_as_not_run_but_cleanup_runs():
    now = [0.0]
    clock = lambda: now[0]  # noqa: E731
    overall = Deadline(1, clock)

    def spends(deadline):
        now[0] += 2  # past the overall bound
        return "took 2 s"

    checks = [spec("service", spends, essential=True), spec("later", "ran")]
    results = runner.run_checks(CTX, overall, 5, checks, cleanup=spec("cleanup", "clean"), clock=clock)  # fmt: skip
    assert [(r.name, r.status, r.detail) for r in results] == [
        ("service", Status.PASSED, "took 2 s"),
        ("later", Status.FAILED, "not run: the overall bound of 1 s was spent"),
        ("cleanup", Status.PASSED, "clean"),
    ]


def test_a_check_gets_the_smaller_of_its_bound_and_what_is_left_of_the_whole_run():
    seen: list[float] = []
    runner.run_checks(CTX, Deadline(0.5), 30, [spec("a", lambda d: seen.append(d.seconds) or "ok")], cleanup=None)  # fmt: skip
    assert 0 < seen[0] <= 0.5


def test_a_deadline_with_no_time_left_fails_the_wait_instead_of_waiting():
    now = [0.0]
    deadline = Deadline(1, lambda: now[0])
    assert deadline.ms(200) == 200 and deadline.ms() == 1000
    now[0] = 1.5
    with pytest.raises(CheckFailed, match="ran out of its 1 s"):
        deadline.ms()


def test_the_webhook_server_queues_each_post_and_answers_200():
    server = WebhookServer().start()
    try:
        answer = requests.post(server.url, data=b'{"records": []}', headers={"X-Magnetar-Timestamp": "5"}, timeout=5)  # fmt: skip
        call = server.next_call(5)
    finally:
        server.stop()
    assert (answer.status_code, answer.json()) == (200, {})
    assert call is not None and call.body == b'{"records": []}'
    assert call.headers["x-magnetar-timestamp"] == "5"


def test_a_webhook_call_is_signed_only_with_the_triggers_secret_over_timestamp_and_body():
    body = b'{"records": []}'
    mac = hmac.new(b"s3cret", b"1700000000000." + body, hashlib.sha256).hexdigest()
    headers = {"x-magnetar-timestamp": "1700000000000", "x-magnetar-signature": f"sha256={mac}"}
    assert signed("s3cret", Call(headers, body))
    assert not signed("other", Call(headers, body))
    assert not signed("s3cret", Call(headers, body + b" "))
    assert not signed("s3cret", Call({**headers, "x-magnetar-timestamp": "1700000000001"}, body))


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8080", True), ("http://localhost:8080", True), ("http://[::1]:80", True),
    ("https://abc.execute-api.eu-west-1.amazonaws.com", False), ("http://10.0.0.5:8080", False),
])  # fmt: skip
def test_only_a_loopback_service_counts_as_on_this_machine(url, local):
    assert on_this_machine(url) is local
