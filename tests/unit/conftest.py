"""Fixtures of the SDK unit tests: an in-process fake of the HTTP API and a client on it."""

from __future__ import annotations

import pytest

import magnetar as pulsar
from magnetar.testing import FakeService


@pytest.fixture
def svc():
    """A FakeService on a free port, stopped after the test."""
    with FakeService() as service:
        yield service


@pytest.fixture
def client(svc):
    """A client of ``svc``, closed after the test."""
    c = pulsar.Client(svc.url)
    yield c
    c.close()
