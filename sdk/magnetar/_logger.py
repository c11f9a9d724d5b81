"""``ConsoleLogger`` and ``FileLogger``, as in pulsar-client (thin ``logging`` wrappers)."""

from __future__ import annotations

import itertools
import logging

from ._enums import LoggerLevel
from ._validate import check_type

__all__ = ["ConsoleLogger", "FileLogger"]

_LEVELS = {LoggerLevel.Debug: logging.DEBUG, LoggerLevel.Info: logging.INFO,
           LoggerLevel.Warn: logging.WARNING, LoggerLevel.Error: logging.ERROR}  # fmt: skip
_IDS = itertools.count()


def _logger(level: LoggerLevel, handler: logging.Handler) -> logging.Logger:
    log = logging.getLogger(f"magnetar.client.{next(_IDS)}")
    log.setLevel(_LEVELS[LoggerLevel(level)])
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    log.addHandler(handler)
    log.propagate = False
    return log


class ConsoleLogger:
    """Log to stderr at ``log_level``; pass as ``Client(logger=...)``. Raises ValueError
    when ``log_level`` is not a ``LoggerLevel``."""

    def __init__(self, log_level: LoggerLevel = LoggerLevel.Info) -> None:
        check_type(LoggerLevel, log_level, "log_level")
        self.log_level = log_level
        self.logger = _logger(log_level, logging.StreamHandler())


class FileLogger:
    """Log to ``log_file`` at ``log_level``; pass as ``Client(logger=...)``. Raises
    ValueError for wrong types, OSError when the file cannot be opened."""

    def __init__(self, log_level: LoggerLevel, log_file: str) -> None:
        check_type(LoggerLevel, log_level, "log_level")
        check_type(str, log_file, "log_file")
        self.log_level = log_level
        self.log_file = log_file
        self.logger = _logger(log_level, logging.FileHandler(log_file))
