"""Stopping a local stack changes no logger: in a test process other tests run after it,
and a silenced logger hid their records (the timers' ``magnetar.*`` and the handlers'
``magnetar-api`` both were, in turn). ``magnetar local`` quiets the handlers as it exits."""

from __future__ import annotations

import logging

from magnetar_core.api.http import SERVICE
from magnetar_local.main import quiet_handlers
from magnetar_local.stack import LocalStack


class StoppedGateway:
    def stop(self) -> None:
        pass


def test_a_stopped_stack_leaves_every_logger_as_it_was(caplog):
    loggers = [logging.getLogger(name) for name in ("magnetar", SERVICE, "magnetar.timers")]
    before = [logger.level for logger in loggers]
    stack = LocalStack()
    stack.gateway = StoppedGateway()  # type: ignore[assignment]
    stack.stop()
    assert [logger.level for logger in loggers] == before
    with caplog.at_level(logging.ERROR):
        logging.getLogger("magnetar.timers").error("still heard")
    assert "still heard" in caplog.text


def test_the_local_command_quiets_the_handlers_as_it_exits():
    handlers = logging.getLogger(SERVICE)
    before = handlers.level
    try:
        quiet_handlers()
        assert handlers.level == logging.CRITICAL
    finally:
        handlers.setLevel(before)
