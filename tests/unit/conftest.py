"""Fixtures of the SDK unit tests: the real engine on in-memory adapters behind the real
HTTP handlers (``MemoryService``), and a client on it."""

from __future__ import annotations

import pytest

import magnetar as pulsar
from magnetar_local.memory_service import MemoryService


@pytest.fixture
def svc():
    """A MemoryService on a free port, stopped after the test."""
    with MemoryService() as service:
        yield service


@pytest.fixture
def client(svc):
    """A client of ``svc``, closed after the test."""
    c = pulsar.Client(svc.url)
    yield c
    c.close()
