"""Webhook addresses (no SSRF): on AWS only https to public hosts, checked when the trigger
is stored (IP literals, local names) and when it is called (what the name resolves to);
a deployment setting allows private ones, as the local stack does."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.targets import WebhookTarget
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.triggers.records import TargetFailed
from magnetar_core.domain.triggers.spec import Target
from magnetar_core.domain.triggers.webhooks import check_webhook_url, public_address
from magnetar_core.engine import Engine
from magnetar_core.settings import Settings
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://127.0.0.1/x",
        "https://10.0.0.8/x",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/x",
        "https://[::ffff:192.168.0.1]/x",
        "https://localhost:8443/x",
        "https://api.localhost/x",
        "https://0.0.0.0/x",
    ],
)
def test_private_or_plain_http_webhooks_are_refused_naming_the_field(url):
    with pytest.raises(InvalidMessage, match="'target.url'"):
        check_webhook_url(url, allow_private=False)
    check_webhook_url(url, allow_private=True)


def test_https_to_a_public_address_or_a_name_is_accepted():
    check_webhook_url("https://hooks.example.com/x", allow_private=False)
    check_webhook_url("https://8.8.8.8/x", allow_private=False)
    assert public_address("8.8.8.8") and not public_address("172.16.0.1")
    assert not public_address("fe80::1%eth0") and not public_address("not-an-ip")


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254, the metadata service
        "64:ff9b::a00:8",  # NAT64 of 10.0.0.8
        "64:ff9b:1::c0a8:1",  # local-use NAT64 of 192.168.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "::10.0.0.8",  # IPv4-compatible
    ],
)
def test_an_ipv6_address_that_embeds_a_private_ipv4_address_is_not_public(address):
    assert not public_address(address)
    with pytest.raises(InvalidMessage, match="private address"):
        check_webhook_url(f"https://[{address}]/x", allow_private=False)


def test_an_ipv6_address_that_embeds_a_public_ipv4_address_is_public():
    assert public_address("64:ff9b::808:808") and public_address("2002:808:808::1")
    assert public_address("2606:4700::1111")


def test_a_name_resolving_to_a_private_address_is_refused_when_called():
    target = Target("webhook", url="https://localhost:9/x", secret="k")
    with pytest.raises(TargetFailed, match="private addresses"):
        WebhookTarget(timeout_ms=500).invoke(target, b"{}", 1)


def test_the_aws_default_refuses_private_webhooks_and_the_setting_allows_them():
    assert Settings.from_env({"TOPICS_TABLE": "t", "LOG_TABLE": "l", "CURSORS_TABLE": "c", "ENTRIES_BUCKET": "b"}).trigger_private_webhooks is False  # fmt: skip
    body = {"target": {"type": "webhook", "url": "http://127.0.0.1:9/h", "secret": "k"}}
    topic = TopicName.parse("persistent://public/default/t")
    for allowed in (False, True):
        engine = Engine.assemble(memory_settings(trigger_private_webhooks=allowed), memory_stores())
        engine.tenants.initialize_cluster()
        engine.admin.create_topic(topic, None)
        if allowed:
            engine.triggers.put(topic, "h", body)
        else:
            with pytest.raises(InvalidMessage, match="'target.url'"):
                engine.triggers.put(topic, "h", body)
            assert engine.admin.subscriptions(topic) == []
