"""``magnetar verify`` as a user runs it after deploying: the command in a subprocess against
the running local stack (authentication off: the auth checks are skipped, saying why), then
against the handlers with authentication on (the 401 and 403 checks pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from magnetar_local.secured import SecuredGateway

MAGNETAR = str(Path(sys.executable).parent / "magnetar")
CHECKS = ["service", "produce-consume-ack", "nack-redelivery", "delayed-delivery", "dead-letter",
          "key-shared-order", "trigger-webhook", "admin-topic-stats", "auth-no-token-401",
          "auth-denied-role-403", "cleanup"]  # fmt: skip
AUTH_CHECKS = {"auth-no-token-401", "auth-denied-role-403"}


def verify(url: str, home: Path, *flags: str) -> tuple[int, dict]:
    """``magnetar verify --json`` against ``url``; its exit status and report. No token is
    found by itself: no MAGNETAR_AUTH_TOKEN, and a state folder without ``local.token``."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAGNETAR_SERVICE_URL", "MAGNETAR_AUTH_TOKEN")}  # fmt: skip
    env["MAGNETAR_HOME"] = str(home)
    done = subprocess.run([MAGNETAR, "verify", "--service-url", url, "--json", "--delay-ms", "1000", *flags],
                          capture_output=True, text=True, env=env, timeout=180)  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def secured_with_triggers(local_stack, engine_clients):
    """Handlers with authentication on whose produces wake the stack's triggers (as under
    ``magnetar local --auth``)."""
    gateway = SecuredGateway(local_stack, engine_clients, triggers=True).start()
    yield gateway
    gateway.stop()


def rows(report: dict) -> dict[str, tuple[str, str]]:
    return {c["name"]: (c["status"], c["detail"]) for c in report["checks"]}


def run_topics_left(url: str, report: dict, headers: dict[str, str] | None = None) -> list[str]:
    listed = requests.get(f"{url}/admin/v2/namespaces/public/default/topics", headers=headers, timeout=30)  # fmt: skip
    return [t for t in listed.json() if t.startswith(report["topicPrefix"])]


def test_verify_holds_on_the_local_stack_with_the_auth_checks_skipped_for_their_reason(local_stack, tmp_path):  # fmt: skip
    status, report = verify(local_stack.url, tmp_path)

    assert [c["name"] for c in report["checks"]] == CHECKS
    found = rows(report)
    assert status == 0 and report["ok"], {n: r for n, r in found.items() if r[0] == "failed"}
    assert {n: s for n, (s, _) in found.items() if n not in AUTH_CHECKS} == {n: "passed" for n in CHECKS if n not in AUTH_CHECKS}  # fmt: skip
    for name in AUTH_CHECKS:
        assert found[name] == ("skipped", "authentication is off: GET /admin/v2/namespaces/public/default/topics without a token answered 200")  # fmt: skip
    assert all(c["timeMs"] > 0 for c in report["checks"])
    assert run_topics_left(local_stack.url, report) == []


def test_verify_with_authentication_on_sees_401_without_a_token_and_403_for_a_role_without_grants(  # fmt: skip
    secured_with_triggers, tmp_path
):
    secured_gateway = secured_with_triggers
    admin, nobody = tmp_path / "admin.token", tmp_path / "nobody.token"
    admin.write_text(secured_gateway.token(secured_gateway.superuser) + "\n")
    nobody.write_text(secured_gateway.token("verify-nobody") + "\n")
    status, report = verify(secured_gateway.url, tmp_path, "--auth-params", admin.as_uri(),
                            "--denied-auth-params", nobody.as_uri())  # fmt: skip

    found = rows(report)
    assert status == 0 and report["ok"], {n: r for n, r in found.items() if r[0] == "failed"}
    assert found["auth-no-token-401"] == ("passed", "GET topics and a produce without a token: 401 AuthenticationError; nothing stored")  # fmt: skip
    assert found["auth-denied-role-403"] == ("passed", "a produce by a role without the grant: 403 AuthorizationError; nothing stored")  # fmt: skip
    assert {s for s, _ in found.values()} == {"passed"}
    assert run_topics_left(secured_gateway.url, report, secured_gateway.headers("admin")) == []


def test_verify_without_the_token_a_service_with_authentication_needs_fails_and_says_so(secured_gateway, tmp_path):  # fmt: skip
    status, report = verify(secured_gateway.url, tmp_path)

    found = rows(report)
    assert status == 1 and not report["ok"]
    assert found["service"][0] == "failed"
    assert "refused the credentials given (401 AuthenticationError" in found["service"][1]
    assert found["produce-consume-ack"] == ("failed", "not run: the service check failed")
