"""Running the checks of ``magnetar verify``, each bounded: a check runs in a thread of its
own with ``min(check bound, what is left of the overall bound)``; one still running after it
(plus ``JOIN_GRACE_S`` for the request it is in) is a failure. The essential check
(``service``: something answers, to these credentials) runs first; when it fails the others
fail as "not run", saying why. The others then run at once (each on topics of its own: the
run takes about as long as the slowest check), or one after the other (``--sequential``);
checks that would start after the overall bound was spent fail as "not run". The rows keep
the checks' order. ``cleanup`` runs last with a bound of its own (skipped when the service check
failed: nothing was created).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from magnetar.cli.verify import checks_messaging as messaging
from magnetar.cli.verify import checks_service as service_checks
from magnetar.cli.verify.context import CheckFailed, CheckSkipped, Clock, Deadline, VerifyContext
from magnetar.cli.verify.report import CheckResult, Status
from magnetar.cli.verify.webhook import trigger_webhook

Check = Callable[[VerifyContext, Deadline], str]
JOIN_GRACE_S = 2.0
CLEANUP_BOUND_S = 30.0


@dataclass(frozen=True)
class CheckSpec:
    """A check: its row's name, what runs, whether the others depend on it passing."""

    name: str
    run: Check
    essential: bool = False


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("service", service_checks.service, essential=True),
    CheckSpec("produce-consume-ack", messaging.produce_consume_ack),
    CheckSpec("nack-redelivery", messaging.nack_redelivery),
    CheckSpec("delayed-delivery", messaging.delayed_delivery),
    CheckSpec("dead-letter", messaging.dead_letter),
    CheckSpec("key-shared-order", messaging.key_shared_order),
    CheckSpec("trigger-webhook", trigger_webhook),
    CheckSpec("admin-topic-stats", service_checks.admin),
    CheckSpec("auth-no-token-401", service_checks.auth_no_token),
    CheckSpec("auth-denied-role-403", service_checks.auth_denied_role),
)
CLEANUP = CheckSpec("cleanup", service_checks.cleanup)


class _Running:
    """A check started in a thread of its own, with its bound."""

    def __init__(self, spec: CheckSpec, ctx: VerifyContext, bound_s: float, clock: Clock) -> None:
        self.spec, self.bound_s, self._clock = spec, bound_s, clock
        self.started = clock()
        self.outcome: list[tuple[Status, str, float]] = []
        self._thread = threading.Thread(target=self._run, args=(ctx,), name=f"verify-{spec.name}", daemon=True)  # fmt: skip
        self._thread.start()

    def _run(self, ctx: VerifyContext) -> None:
        try:
            status, detail = Status.PASSED, self.spec.run(ctx, Deadline(self.bound_s, self._clock))
        except CheckSkipped as e:
            status, detail = Status.SKIPPED, str(e)
        except CheckFailed as e:
            status, detail = Status.FAILED, str(e)
        except Exception as e:  # noqa: BLE001 - any error of a check is its failure
            status, detail = Status.FAILED, f"{type(e).__name__}: {e}"
        self.outcome.append((status, detail, self._clock()))

    def result(self) -> CheckResult:
        """Its row, once it ended or its bound (plus ``JOIN_GRACE_S``) passed."""
        self._thread.join(max(0.0, self.started + self.bound_s + JOIN_GRACE_S - self._clock()))
        if not self.outcome:
            time_ms = round((self._clock() - self.started) * 1000)
            return CheckResult(self.spec.name, Status.FAILED, time_ms,
                               f"did not finish within its bound of {self.bound_s:g} s")  # fmt: skip
        status, detail, ended = self.outcome[0]
        return CheckResult(self.spec.name, status, round((ended - self.started) * 1000), detail)


def run_one(spec: CheckSpec, ctx: VerifyContext, bound_s: float, clock: Clock = time.monotonic) -> CheckResult:  # fmt: skip
    """Run ``spec`` within ``bound_s`` seconds; its row."""
    return _Running(spec, ctx, bound_s, clock).result()


def run_checks(
    ctx: VerifyContext,
    overall: Deadline,
    check_bound_s: float,
    checks: Sequence[CheckSpec] = CHECKS,
    cleanup: CheckSpec | None = CLEANUP,
    clock: Clock = time.monotonic,
    concurrent: bool = True,
) -> list[CheckResult]:
    """The rows of ``checks`` in their order, then ``cleanup``'s (see the module's
    docstring). Essential checks run first, one at a time; the others then all at once
    (``concurrent``) or one after the other."""
    results: dict[str, CheckResult] = {}
    blocked: str | None = None
    running: list[_Running] = []

    def bound() -> float:
        return min(check_bound_s, overall.remaining_s())

    for spec in sorted(checks, key=lambda c: not c.essential):
        if blocked is None and overall.expired:
            blocked = f"the overall bound of {overall.seconds:g} s was spent"
        if blocked is not None:
            results[spec.name] = CheckResult(spec.name, Status.FAILED, 0, f"not run: {blocked}")
            continue
        started = _Running(spec, ctx, bound(), clock)
        if spec.essential or not concurrent:
            result = results[spec.name] = started.result()
            if spec.essential and result.status is Status.FAILED:
                blocked = f"the {spec.name} check failed"
        else:
            running.append(started)
    for check in running:
        results[check.spec.name] = check.result()
    ordered = [results[spec.name] for spec in checks]
    if cleanup is not None and any(c.essential and results[c.name].status is Status.FAILED for c in checks):  # fmt: skip
        ordered.append(CheckResult(cleanup.name, Status.SKIPPED, 0, "nothing was created: an essential check failed"))  # fmt: skip
    elif cleanup is not None:
        ordered.append(run_one(cleanup, ctx, CLEANUP_BOUND_S, clock))
    return ordered
