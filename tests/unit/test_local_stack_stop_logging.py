"""Stopping a local stack changes no logger: in a test process other tests run after it,
and a silenced logger hid their records (the timers' ``magnetar.*`` and the handlers'
``magnetar-api`` both were, in turn). ``magnetar local`` quiets the handlers as it exits,
kills its emulator rather than wait for moto's exit, and freezes its heap for the exit's
collections, only once it served (not after a failed start, which a test process
survives); a stack stopped otherwise lets its emulator end as moto does (its keep-alive
connections answer the requests still in flight)."""

from __future__ import annotations

import gc
import logging

from magnetar_core.api.http import SERVICE
from magnetar_local import main as local_main
from magnetar_local.emulator import Emulator
from magnetar_local.main import before_exit, quiet_handlers
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


def test_the_local_command_freezes_its_heap_before_the_exit(heap_frozen_again):
    gc.unfreeze()
    try:
        before_exit()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_local_command_that_could_not_start_leaves_the_heap_unfrozen(
    monkeypatch, capsys, heap_frozen_again
):
    def refuse(self, **kwargs):
        raise OSError("port taken")

    monkeypatch.setattr(LocalStack, "start", refuse)
    gc.unfreeze()
    assert local_main.run(["--ephemeral", "--port", "0"]) == 1
    assert "cannot start: port taken" in capsys.readouterr().err
    assert gc.get_freeze_count() == 0


class Process:
    """A child process that records the signal it was sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def poll(self) -> int | None:
        return None if not self.sent else -9

    def kill(self) -> None:
        self.sent.append("SIGKILL")

    def terminate(self) -> None:
        self.sent.append("SIGTERM")

    def wait(self, timeout: float | None = None) -> int:
        return -9


def test_a_stack_stopped_at_once_kills_its_emulator_and_otherwise_terminates_it():
    sent = []
    for at_once in (True, False):
        stack = LocalStack()
        stack.emulator = Emulator()
        stack.emulator.process = process = Process()  # type: ignore[assignment]
        stack.stop(at_once=at_once)
        sent.append(process.sent)
    assert sent == [["SIGKILL"], ["SIGTERM"]]
