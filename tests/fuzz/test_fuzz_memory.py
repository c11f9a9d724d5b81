"""Fuzzing: every operation of openapi.yaml, fuzzed by schemathesis with a fixed seed,
against the real handlers and engine on in-memory adapters behind the local gateway
(MemoryService): no 5xx, every answer as documented, a rejected request changes no stored
item (every store read back before and after it), and a request the document admits is not
refused for its form (``positive_acceptance``; fuzz_support.LOOSER_THAN_THE_SERVICE lists the
operations where the document is still looser than the service, and what)."""

from __future__ import annotations

import time

import pytest
from fuzz_support import (
    SETTINGS,
    ReadBack,
    every_operation,
    memory_state,
    positive_acceptance,
    report,
    run_case,
    schema,
)

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
    run_case(case, svc.url, "memory", state, checks=[positive_acceptance])
