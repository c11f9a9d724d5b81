"""The local gateway's Lambda containers: each loads its handler module and builds its own
engine (own caches), all of them on one set of boto3 clients (``SharedClients``): a burst of
concurrent requests loads a container per request, and each container's own clients cost
about 20 ms of CPU to make."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.emulator


def _engine_of(handler):
    """The engine of the container whose handler this is: its module's (``magnetar_fn_*``)
    ``engine``, built by its first call."""
    (module,) = [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("magnetar_fn_") and getattr(m, "lambda_handler", None) is handler
    ]
    return module.engine()


def test_containers_loaded_at_once_build_engines_of_their_own_on_the_same_boto3_clients(
    local_stack,
):
    loader = local_stack.gateway.loader
    with loader.lease("ReceiveFunction") as one, loader.lease("ReceiveFunction") as two:
        assert one is not two  # two containers: one request at a time each
        first, second = _engine_of(one), _engine_of(two)
    assert first is not second
    first_log, second_log = first.subscriptions.context.log, second.subscriptions.context.log
    assert first_log is not second_log
    assert first_log._ddb is second_log._ddb
    assert first.entries._s3 is second.entries._s3
