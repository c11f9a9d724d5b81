"""``magnetar verify``'s checks against the real handlers on in-memory adapters
(``MemoryService``): they pass on a service that holds, the auth checks fail when a role is
let in that should not be, and skips say why. The timer checks (nack, delayed) and the
webhook's delivery run in tests/e2e/test_verify.py, on the embedded stack."""

from __future__ import annotations

import pytest
import requests
from auth_support import SUPERUSER, auth_service, bearer, token

import magnetar as pulsar
from magnetar.cli.verify import checks_messaging, checks_service
from magnetar.cli.verify.context import CheckFailed, CheckSkipped, Deadline, Service, VerifyContext
from magnetar.cli.verify.webhook import trigger_webhook


def context(url: str, role: str | None = None, denied_role: str | None = None) -> VerifyContext:
    headers = bearer(role) if role else {}
    auth = pulsar.AuthenticationToken(token(role)) if role else None
    return VerifyContext(
        client=pulsar.Client(url, authentication=auth, operation_timeout_seconds=10),
        service=Service(url, lambda: headers, timeout_s=10),
        namespace="public/default",
        run_id="unit",
        denied_headers=bearer(denied_role) if denied_role else None,
    )


@pytest.fixture
def ctx(svc):
    made = context(svc.url)
    yield made
    made.client.close()
    made.service.close()


@pytest.mark.parametrize("check", [
    checks_service.service, checks_messaging.produce_consume_ack, checks_messaging.dead_letter,
    checks_messaging.key_shared_order, checks_service.admin,
])  # fmt: skip
def test_each_check_holds_on_a_service_that_keeps_its_guarantees(ctx, check):
    assert check(ctx, Deadline(20))


def test_cleanup_deletes_every_topic_of_the_run_and_no_other(ctx, svc):
    other = "persistent://public/default/not-verify-s"
    requests.put(f"{svc.url}/admin/v2/persistent/public/default/not-verify-s", timeout=5)
    checks_messaging.dead_letter(ctx, Deadline(20))  # a topic and its dead letter topic

    assert checks_service.cleanup(ctx, Deadline(20)) == "deleted the run's 2 topics"
    listed = requests.get(f"{svc.url}/admin/v2/namespaces/public/default/topics", timeout=5).json()
    assert [t for t in listed if t.startswith(ctx.topic_prefix)] == [] and other in listed


def test_the_auth_checks_are_skipped_saying_why_when_a_request_without_a_token_is_served(ctx):
    for check in (checks_service.auth_no_token, checks_service.auth_denied_role):
        with pytest.raises(CheckSkipped, match="authentication is off: GET .* without a token answered 200"):  # fmt: skip
            check(ctx, Deadline(5))


def test_with_authentication_on_no_token_is_401_and_a_role_without_grants_is_403():
    with auth_service() as svc:
        ctx = context(svc.url, SUPERUSER, denied_role="nobody")
        try:
            assert "401 AuthenticationError" in checks_service.auth_no_token(ctx, Deadline(5))
            assert "403 AuthorizationError" in checks_service.auth_denied_role(ctx, Deadline(5))
        finally:
            ctx.client.close()


def test_the_403_check_fails_when_the_denied_role_may_produce_after_all():
    with auth_service(writer=["produce"]) as svc:
        ctx = context(svc.url, SUPERUSER, denied_role="writer")
        try:
            with pytest.raises(CheckFailed, match="without the grant answered 200"):
                checks_service.auth_denied_role(ctx, Deadline(5))
        finally:
            ctx.client.close()


def test_the_403_check_is_skipped_without_a_token_of_a_role_without_grants():
    with auth_service() as svc:
        ctx = context(svc.url, SUPERUSER)
        try:
            with pytest.raises(CheckSkipped, match="--denied-auth-params"):
                checks_service.auth_denied_role(ctx, Deadline(5))
        finally:
            ctx.client.close()


def test_the_service_check_says_to_give_a_token_when_authentication_refuses_the_request():
    with auth_service() as svc:
        ctx = context(svc.url)
        try:
            with pytest.raises(CheckFailed, match="refused the credentials given .*--auth-params"):
                checks_service.service(ctx, Deadline(5))
        finally:
            ctx.client.close()


def test_the_webhook_check_is_skipped_for_a_service_that_is_not_on_this_machine():
    remote = VerifyContext(client=None, service=Service("https://abc.execute-api.eu-west-1.amazonaws.com", dict),
                           namespace="public/default", run_id="unit")  # fmt: skip
    with pytest.raises(CheckSkipped, match="not on this machine .*--webhook-url"):
        trigger_webhook(remote, Deadline(5))
