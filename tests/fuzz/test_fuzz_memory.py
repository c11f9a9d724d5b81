"""Fuzzing (issue 11): every operation of openapi.yaml, fuzzed by schemathesis with a fixed
seed, against the real handlers and engine on in-memory adapters behind the local gateway
(MemoryService): no 5xx, every answer as documented, and a rejected request changes no
stored item (every store read back before and after it)."""

from __future__ import annotations

import time

import pytest
from fuzz_support import SETTINGS, ReadBack, every_operation, memory_state, report, run_case, schema

from magnetar_local.memory_service import MemoryService


@pytest.fixture(scope="module")
def lane():
    """Prints the lane's totals (``-s`` shows them): requests, 5xx, seconds."""
    started = time.monotonic()
    yield
    print(report("memory", started))


@pytest.fixture
def service(lane):
    """A service of its own for each operation: its stores stay small to read back whole."""
    with MemoryService() as svc:
        yield svc, ReadBack(lambda: memory_state(svc))


@every_operation(schema)
@SETTINGS
def test_every_operation_answers_fuzzed_requests_as_documented_and_rejections_change_nothing(
    case, service
):
    svc, state = service
    run_case(case, svc.url, "memory", state)
