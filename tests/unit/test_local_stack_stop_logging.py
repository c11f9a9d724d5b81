"""Stopping a local stack silences the handlers' logger (long-polls end against a stopped
emulator) and no other: the SDK's and the engine's ``magnetar.*`` loggers keep their level,
so later tests of the process still see their records."""

from __future__ import annotations

import logging

from magnetar_core.api.http import SERVICE
from magnetar_local.stack import LocalStack


class StoppedGateway:
    def stop(self) -> None:
        pass


def test_a_stopped_stack_silences_the_handlers_logger_only(caplog):
    sdk, handlers = logging.getLogger("magnetar"), logging.getLogger(SERVICE)
    before = sdk.level, handlers.level
    stack = LocalStack()
    stack.gateway = StoppedGateway()  # type: ignore[assignment]
    try:
        stack.stop()
        assert handlers.level == logging.CRITICAL and sdk.level == before[0]
        with caplog.at_level(logging.ERROR):
            logging.getLogger("magnetar.timers").error("still heard")
        assert "still heard" in caplog.text
    finally:
        sdk.setLevel(before[0])
        handlers.setLevel(before[1])
