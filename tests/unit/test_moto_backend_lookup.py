"""The emulator's backend lookup is cached per host: the same backend as moto's own lookup,
which runs once per host however many requests come."""

from __future__ import annotations

from moto.moto_server.werkzeug_app import DomainDispatcherApplication

from magnetar_local import moto_boot


def test_each_hosts_backend_is_looked_up_once_and_is_the_one_moto_finds(monkeypatch):
    calls: list[str | None] = []
    original = DomainDispatcherApplication.get_backend_for_host

    def counted(self, host):
        calls.append(host)
        return original(self, host)

    monkeypatch.setattr(DomainDispatcherApplication, "get_backend_for_host", counted)
    moto_boot.cache_backend_lookup()
    moto_boot.cache_backend_lookup()  # idempotent: not wrapped twice
    app = DomainDispatcherApplication(create_app=lambda backend: None)

    hosts = ["dynamodb.us-east-1.amazonaws.com", "127.0.0.1:4566", "s3.amazonaws.com"]
    found = [app.get_backend_for_host(h) for h in hosts * 3]

    assert found[:3] == [original(app, h) for h in hosts] == ["dynamodb", None, "s3"]
    assert found[3:] == found[:3] * 2
    assert calls == hosts
