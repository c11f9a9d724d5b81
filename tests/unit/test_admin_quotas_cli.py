"""``magnetar admin namespaces``' backlog quota and rate verbs against the memory service:
pulsar-admin's flags and units in, Pulsar's bodies on the routes, tables or JSON out."""

from __future__ import annotations

import json

import pytest

from magnetar.cli import main as cli

NS = "public/default"


def admin(svc, capsys, *words: str) -> tuple[int, str, str]:
    status = cli.main(["admin", "--service-url", svc.url, *words])
    got = capsys.readouterr()
    return status, got.out, got.err


def read_json(svc, capsys, *words: str):
    status, out, err = admin(svc, capsys, *words, "-o", "json")
    assert status == 0, err
    return json.loads(out) if out.strip() else None


def test_a_backlog_quota_set_with_units_reads_back_in_bytes_and_seconds_then_goes(svc, capsys):
    set_quota = ("namespaces", "set-backlog-quota", NS, "-l", "2M", "-lt", "1h")
    assert admin(svc, capsys, *set_quota, "-p", "producer_exception") == (0, "", "")
    quotas = read_json(svc, capsys, "namespaces", "get-backlog-quotas", NS)
    assert quotas["destination_storage"] == {
        "limitSize": 2 * 1024 * 1024, "limitTime": 3600, "policy": "producer_exception",
    }  # fmt: skip
    status, table, _ = admin(svc, capsys, "namespaces", "get-backlog-quotas", NS)
    assert status == 0 and "destination_storage" in table
    assert admin(svc, capsys, "namespaces", "remove-backlog-quota", NS) == (0, "", "")
    assert read_json(svc, capsys, "namespaces", "get-backlog-quotas", NS) == {}


def test_rates_take_pulsar_admins_flags_and_an_unset_rate_prints_nothing(svc, capsys):
    rate = ("namespaces", "set-publish-rate", NS, "-m", "100", "-b", "-1")
    assert admin(svc, capsys, *rate) == (0, "", "")
    assert read_json(svc, capsys, "namespaces", "get-publish-rate", NS) == {
        "publishThrottlingRateInMsg": 100, "publishThrottlingRateInByte": -1,
    }  # fmt: skip
    subscribe = ("namespaces", "set-subscribe-rate", NS, "-sr", "5", "-st", "10")
    assert admin(svc, capsys, *subscribe) == (0, "", "")
    assert read_json(svc, capsys, "namespaces", "get-subscribe-rate", NS) == {
        "subscribeThrottlingRatePerConsumer": 5, "ratePeriodInSecond": 10,
    }  # fmt: skip
    for name in ("publish-rate", "subscribe-rate"):
        assert admin(svc, capsys, "namespaces", f"remove-{name}", NS) == (0, "", "")
        assert admin(svc, capsys, "namespaces", f"get-{name}", NS) == (0, "", "")


def test_a_malformed_size_or_namespace_is_a_usage_error_and_sends_nothing(svc, capsys):
    bad_size = ("set-backlog-quota", NS, "-l", "ten", "-p", "producer_exception")
    with pytest.raises(SystemExit) as exited:
        admin(svc, capsys, "namespaces", *bad_size)
    assert exited.value.code == 2 and "a size is a whole number" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        admin(svc, capsys, "namespaces", "get-publish-rate", "no-slash")
    assert exited.value.code == 2
    assert read_json(svc, capsys, "namespaces", "get-backlog-quotas", NS) == {}
