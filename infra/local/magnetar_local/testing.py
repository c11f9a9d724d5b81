"""pytest fixtures for the embedded stack (imported by tests/conftest.py).

``local_stack``: one LocalStack per test session, on free ports.
``aws_clients``: boto3 ``dynamodb``, ``s3`` and ``stepfunctions`` clients on its emulator.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from magnetar_local.stack import LocalStack


@dataclass(frozen=True)
class AwsClients:
    """boto3 clients bound to the local emulator."""

    dynamodb: Any
    s3: Any
    stepfunctions: Any


@pytest.fixture(scope="session")
def local_stack() -> Iterator[LocalStack]:
    """The running local stack (emulator + tables/bucket/state machines + gateway)."""
    stack = LocalStack().start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="session")
def aws_clients(local_stack: LocalStack) -> AwsClients:
    """boto3 clients on the local stack's emulator."""
    return AwsClients(
        dynamodb=local_stack.client("dynamodb"),
        s3=local_stack.client("s3"),
        stepfunctions=local_stack.client("stepfunctions"),
    )
