"""Errors named after Pulsar's results that the HTTP API answers with (``{"error": code}``).

``MagnetarError`` is the base the service's errors derive from (magnetar_core.domain.errors
adds the rest); it lives here because ``InvalidTopicName`` is raised by the topic names that
the SDK and the service share (``magnetar_wire.names``). The SDK translates it at its edge
into its own ``magnetar.InvalidTopicName``.
"""

from __future__ import annotations


class MagnetarError(Exception):
    """Base of every error a caller can act on. ``code`` is Pulsar's result name, ``status``
    the HTTP status the service answers with, ``message`` what went wrong."""

    code = "UnknownError"
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidTopicName(MagnetarError):
    """Pulsar's InvalidTopicName: a topic name that breaks the naming rules (HTTP 400)."""

    code = "InvalidTopicName"
    status = 400
