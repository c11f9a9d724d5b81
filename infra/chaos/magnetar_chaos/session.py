"""The client, stack and injector of one ``magnetar chaos`` command."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import magnetar as pulsar
from magnetar_chaos.faults import FaultInjector, FaultPlan


@contextlib.contextmanager
def session(plan: FaultPlan, service_url: str | None) -> Iterator[tuple[Any, Any, Any, Any]]:
    """(client, stack, injector, observer): with ``service_url`` only the client (the
    others None); else a new LocalStack with faults injected per ``plan``."""
    logging.basicConfig(level=logging.WARNING)
    if service_url:
        client = pulsar.Client(service_url)
        try:
            yield client, None, None, None
        finally:
            client.close()
        return
    from magnetar_chaos.harness import faulty, quiet_logs
    from magnetar_local.stack import LocalStack

    previous = logging.root.manager.disable
    try:
        with LocalStack().start() as stack:
            quiet_logs()
            injector = FaultInjector(plan)
            with faulty(stack, injector) as observer:
                client = pulsar.Client(stack.url)
                try:
                    yield client, stack, injector, observer
                finally:
                    client.close()
                    # long polls still running server-side end against a stopped emulator
                    logging.disable(logging.CRITICAL)
    finally:
        # the command may run in-process (tests): its caller's logging comes back
        logging.disable(previous)
