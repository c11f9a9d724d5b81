"""Timers of short waits run as Express executions, longer ones as Standard: the policy and
the Step Functions adapter's choice, by an injected clock."""

from __future__ import annotations

from magnetar_core.adapters.aws.timers import TimerStarter
from magnetar_core.domain.timers import TimerKinds

NOW_MS = 1_800_000_000_000


class RecordingStepFunctions:
    """Records ``start_execution`` calls (unit tests may use fakes)."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def start_execution(self, stateMachineArn: str, name: str, input: str) -> dict:  # noqa: N803, A002
        self.started.append(stateMachineArn)
        return {"executionArn": f"{stateMachineArn}:{name}"}


def test_a_wait_up_to_the_limit_is_express_and_a_longer_one_standard():
    kinds = TimerKinds(express_max_wait_ms=60_000)
    assert kinds.express(NOW_MS + 60_000, NOW_MS)
    assert kinds.express(NOW_MS - 5_000, NOW_MS)  # overdue: released at once
    assert not kinds.express(NOW_MS + 60_001, NOW_MS)
    assert not TimerKinds(express_max_wait_ms=0).express(NOW_MS + 1, NOW_MS)


def test_the_starter_sends_short_waits_to_the_express_workflow_by_its_clock():
    sfn = RecordingStepFunctions()
    starter = TimerStarter(sfn, "arn:standard", "arn:express", lambda: NOW_MS, TimerKinds(60_000))
    assert starter.start("pk", "s", "t1", NOW_MS + 2_000)
    assert starter.start("pk", "s", "t1", NOW_MS + 3_600_000)
    assert sfn.started == ["arn:express", "arn:standard"]


def test_without_an_express_workflow_every_timer_is_standard():
    sfn = RecordingStepFunctions()
    starter = TimerStarter(sfn, "arn:standard")
    starter.start("pk", "s", "t1", NOW_MS + 2_000)
    assert sfn.started == ["arn:standard"]
