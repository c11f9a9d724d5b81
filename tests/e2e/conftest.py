"""Fixtures of the e2e tests: an SDK client on the embedded stack's HTTP API."""

from __future__ import annotations

import pytest

import magnetar as pulsar


@pytest.fixture
def client(local_stack):
    """A ``magnetar.Client`` on the local stack, closed after the test."""
    c = pulsar.Client(local_stack.url)
    yield c
    c.close()
