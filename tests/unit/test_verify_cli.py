"""``magnetar verify``'s command line: usage errors exit 2 and send nothing, a service that
does not answer exits 1 with the reason in the table or the JSON."""

from __future__ import annotations

import json
import socket

import pytest

from magnetar.cli import main as cli


@pytest.fixture
def closed_port_url() -> str:
    """The URL of a port nothing listens on (bound, then closed: refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("flags", [
    ["--namespace", "no-slash"], ["--timeout-seconds", "0"], ["--check-timeout-seconds", "-1"],
    ["--delay-ms", "0"], ["--auth-params", "a", "--token", "b"], ["--no-such-flag"],
])  # fmt: skip
def test_a_usage_error_exits_2_with_the_flag_named(flags, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["verify", "--service-url", "http://127.0.0.1:1", *flags])
    assert stopped.value.code == 2
    assert "magnetar verify" in capsys.readouterr().err


def test_an_unknown_auth_plugin_exits_2_before_anything_is_sent(capsys):
    assert cli.main(["verify", "--service-url", "http://127.0.0.1:1", "--auth-plugin", "kerberos"]) == 2  # fmt: skip
    assert "--auth-plugin 'kerberos'" in capsys.readouterr().err


def test_a_service_that_does_not_answer_fails_the_service_check_and_nothing_else_runs(closed_port_url, capsys):  # fmt: skip
    assert cli.main(["verify", "--service-url", closed_port_url, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["ok"], report["serviceUrl"]) == (False, closed_port_url)
    rows = {c["name"]: c for c in report["checks"]}
    assert rows["service"]["status"] == "failed"
    assert f"no answer from {closed_port_url}" in rows["service"]["detail"]
    assert "--service-url" in rows["service"]["detail"]  # what to do
    others = [c for name, c in rows.items() if name not in ("service", "cleanup")]
    assert len(others) == 9
    assert all((c["status"], c["detail"]) == ("failed", "not run: the service check failed") for c in others)  # fmt: skip
    assert rows["cleanup"]["status"] == "skipped"


def test_the_table_says_the_deployment_does_not_hold_when_a_check_failed(closed_port_url, capsys):
    assert cli.main(["verify", "--service-url", closed_port_url]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:2] == ["CHECK", "RESULT"]
    assert out.rstrip().endswith("the deployment does NOT hold")
