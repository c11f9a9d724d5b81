"""Namespace policies on the data path: cached per engine for ``POLICY_CACHE_MS``, and read
again at once after a change where the engines share a commit signal that wakes (one
process: the local stack, the memory service)."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.aws.commit_signal import PollingSignal
from magnetar_core.adapters.memory import memory_stores
from magnetar_core.adapters.memory.commit_signal import CommitSignal
from magnetar_core.engine import Engine
from magnetar_local.memory_service import memory_settings
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/orders")
CACHE_MS = 600_000
"""Far longer than any test: only a change notice can make a cached engine read again."""


def _engines(signal) -> tuple[Engine, Engine]:
    """An admin's engine and a producer's engine (two containers) on one set of stores."""
    stores = memory_stores()
    settings = memory_settings(policy_cache_ms=CACHE_MS)
    admin = Engine.assemble(settings, stores, signal=signal)
    assert admin.tenants.initialize_cluster() is True
    return admin, Engine.assemble(settings, stores, signal=signal)


def test_a_namespace_policy_change_reaches_another_engine_at_once_through_a_shared_signal():
    admin, data = _engines(CommitSignal())
    assert data.namespaces.effective(TOPIC).deduplication is False  # now cached there
    admin.namespaces.set_deduplication("public", "default", True)
    assert data.namespaces.effective(TOPIC).deduplication is True
    admin.namespaces.set_message_ttl("public", "default", 60)
    assert data.namespaces.effective(TOPIC).message_ttl_seconds == 60


def test_a_policy_change_of_one_namespace_leaves_the_others_cached():
    signal = CommitSignal()
    admin, data = _engines(signal)
    admin.namespace_admin.create("public", "other", {})
    other = TopicName.parse("persistent://public/other/orders")
    data.namespaces.effective(other)
    seen = signal.version("policies:public/other")
    admin.namespaces.set_deduplication("public", "default", True)
    assert signal.version("policies:public/other") == seen
    assert data.namespaces.effective(TOPIC).deduplication is True


@pytest.mark.parametrize(
    "signal",
    [None, PollingSignal(lambda ms: None)],
    ids=["no signal", "AWS: a signal that does not wake"],
)
def test_without_a_waking_signal_another_engine_keeps_its_cached_policies_until_they_expire(
    signal,
):
    admin, data = _engines(signal)
    assert data.namespaces.effective(TOPIC).deduplication is False
    admin.namespaces.set_deduplication("public", "default", True)
    assert data.namespaces.effective(TOPIC).deduplication is False  # POLICY_CACHE_MS bound
    assert data.namespaces.effective(TOPIC, fresh=True).deduplication is True
