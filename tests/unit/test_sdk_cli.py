"""The ``magnetar`` CLI against the engine on in-memory adapters."""

from __future__ import annotations

import sys
import time

import pytest

from magnetar.cli import main as cli


def test_produce_sends_each_message_n_times_and_reports_the_count(svc, capsys):
    assert cli.main(["produce", "t", "-m", "a,b", "-n", "2", "-k", "key", "-p", "x=1",
                     "--service-url", svc.url]) == 0  # fmt: skip
    assert capsys.readouterr().out.strip() == "4 messages successfully produced"
    msgs = [r.body.messages[0] for r in svc.recorded("produce")]
    assert [m.payload for m in msgs] == [b"a", b"b", b"a", b"b"]
    assert {m.key for m in msgs} == {"key"} and dict(msgs[0].properties) == {"x": "1"}


def test_produce_with_deliver_at_or_deliver_after_ms_sends_delayed_messages(svc, capsys):
    assert cli.main(["produce", "t", "-m", "a", "--deliver-at", "1800000000000",
                     "--service-url", svc.url]) == 0  # fmt: skip
    before = int(time.time() * 1000)
    assert cli.main(["produce", "t", "-m", "b", "--deliver-after-ms", "60000",
                     "--service-url", svc.url]) == 0  # fmt: skip
    at, after = [r.body.messages[0].deliver_at_ms for r in svc.recorded("produce")]
    assert at == 1_800_000_000_000
    assert before + 60_000 <= after <= int(time.time() * 1000) + 60_000


def test_consume_prints_each_message_and_acknowledges_it(svc, capsys, monkeypatch):
    monkeypatch.setenv("MAGNETAR_SERVICE_URL", svc.url)
    assert cli.main(["produce", "t", "-m", "hello", "-m", "world"]) == 0
    capsys.readouterr()
    assert cli.main(["consume", "t", "-s", "sub", "-n", "2", "-t", "Shared", "-p", "Earliest"]) == 0
    out = capsys.readouterr().out
    assert out == (
        "----- got message -----\nkey:[null], properties:[], content:hello\n"
        "----- got message -----\nkey:[null], properties:[], content:world\n"
        "2 messages successfully consumed\n"
    )
    assert [r.body["subscriptionType"] for r in svc.recorded("subscribe")] == ["Shared"]
    assert sum(len(r.body["messageIds"]) for r in svc.recorded("ack")) == 2


def test_consume_with_a_timeout_stops_when_nothing_arrives(svc, capsys):
    assert cli.main(["consume", "t", "-s", "sub", "-n", "0", "--timeout", "0.2",
                     "--service-url", svc.url]) == 0  # fmt: skip
    assert capsys.readouterr().out.endswith("0 messages successfully consumed\n")


def test_consume_that_times_out_before_n_messages_exits_1_and_says_so(svc, capsys):
    assert cli.main(["produce", "short", "-m", "only", "--service-url", svc.url]) == 0
    assert cli.main(["consume", "short", "-s", "sub", "-n", "2", "-p", "Earliest",
                     "--timeout", "0.5", "--service-url", svc.url]) == 1  # fmt: skip
    captured = capsys.readouterr()
    assert captured.out.endswith("1 messages successfully consumed\n")
    assert "error: timed out after 1 of 2 messages" in captured.err


def test_errors_are_printed_with_their_pulsar_name_and_exit_status_1(capsys):
    assert cli.main(["produce", "t", "-m", "x", "--service-url", "http://127.0.0.1:9"]) == 1
    assert "ConnectError" in capsys.readouterr().err
    assert cli.main(["produce", "t", "-m", "x", "--service-url", "pulsar://h:6650"]) == 1
    assert "HTTP URL of the Magnetar API" in capsys.readouterr().err


class _NotInstalled:
    """A meta path finder that makes ``package`` look not installed, as in a client-only venv."""

    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.package:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


@pytest.mark.parametrize(
    ("verb", "package"),
    [
        ("local", "magnetar_local"),
        ("jobs", "magnetar_local"),
        ("perf", "magnetar_bench"),
        ("chaos", "magnetar_chaos"),
    ],  # fmt: skip
)
def test_a_service_side_verb_without_the_service_installed_says_what_to_install_and_exits_2(
    verb, package, capsys, monkeypatch
):
    assert cli.SERVER_VERBS[verb][0].startswith(f"{package}.")
    for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NotInstalled(package), *sys.meta_path])
    assert cli.main([verb, "run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"`magnetar {verb}` needs '{package}', which is not installed here" in captured.err
    assert f"part of the Magnetar service side ({package})" in captured.err
    assert "pip install -e ./sdk -e '.[dev]'" in captured.err
    assert "Traceback" not in captured.err


def test_the_service_side_verbs_are_handed_everything_after_the_verb(monkeypatch):
    import magnetar_bench.cli

    seen = []
    monkeypatch.setattr(magnetar_bench.cli, "main", lambda argv: seen.append(argv) or 0)
    assert cli.main(["perf", "produce", "-n", "10", "--batch", "1"]) == 0
    assert seen == [["produce", "-n", "10", "--batch", "1"]]


def test_magnetar_chaos_is_handed_everything_after_the_verb_and_refuses_unknown_faults(capsys):
    assert cli.main(["chaos", "run", "--faults", "throttle,meteor"]) == 2
    assert "unknown fault kinds ['meteor']" in capsys.readouterr().err
