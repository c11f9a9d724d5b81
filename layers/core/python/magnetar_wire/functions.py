"""Pulsar Functions' Python API: ``pulsar.Function`` and its ``Context`` (``magnetar``
re-exports them: ``import magnetar as pulsar; class F(pulsar.Function)``).

Write a function as for Pulsar and register it with ``magnetar functions create``; inside a
function ``from pulsar import Function`` gives this API too (the loader maps the name
``pulsar`` in the function's module only)::

    import magnetar as pulsar

    class Exclaim(pulsar.Function):
        def process(self, input, context):
            context.incr_counter("seen", 1)
            return input + "!"

``process`` gets each input message's payload through ``IdentitySerDe`` (an int, float,
complex or str when the UTF-8 text parses as one, else bytes); a return value other than
None is published to the function's output topic, effectively once. The service supplies
the context (``Context``'s methods, Pulsar's names); this module only defines the API. It
lives in ``magnetar_wire`` (stdlib only) so the Lambda layer that runs functions has it
without the SDK's HTTP dependencies (``magnetar_core.services.functions.loader``).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any

from magnetar_wire.serde import IdentitySerDe

__all__ = ["Context", "Function", "IdentitySerDe", "SerDe"]


class SerDe(ABC):
    """Pulsar's SerDe interface (``serialize(obj) -> bytes``, ``deserialize(bytes)``)."""

    @abstractmethod
    def serialize(self, input: Any) -> bytes: ...  # noqa: A002 - Pulsar's parameter name

    @abstractmethod
    def deserialize(self, input_bytes: bytes) -> Any: ...


class Context(ABC):
    """What ``process`` may ask about the current message and the function (Pulsar's
    ``pulsar.Context``). Counters and state are kept per function by the service."""

    @abstractmethod
    def get_message_id(self) -> str:
        """The current message's id, ``"ledger:entry:partition:batch"``."""

    @abstractmethod
    def get_message_key(self) -> str | None:
        """The current message's key (None: no key)."""

    @abstractmethod
    def get_message_eventtime(self) -> int:
        """The current message's event time in epoch ms (0: unset)."""

    @abstractmethod
    def get_message_properties(self) -> dict[str, str]:
        """The current message's properties."""

    @abstractmethod
    def get_current_message_topic_name(self) -> str:
        """The full name of the (partition) topic the current message came from."""

    @abstractmethod
    def get_message_partition_index(self) -> int:
        """The partition of the current message (-1: a non-partitioned topic)."""

    @abstractmethod
    def get_function_name(self) -> str: ...

    @abstractmethod
    def get_function_tenant(self) -> str: ...

    @abstractmethod
    def get_function_namespace(self) -> str: ...

    @abstractmethod
    def get_function_id(self) -> str:
        """``tenant/namespace/name``."""

    @abstractmethod
    def get_instance_id(self) -> int: ...

    @abstractmethod
    def get_function_version(self) -> int: ...

    @abstractmethod
    def get_logger(self) -> logging.Logger:
        """A logger named after the function."""

    @abstractmethod
    def get_user_config_value(self, key: str) -> Any:
        """The value of ``key`` in the function's user config (None: not set)."""

    @abstractmethod
    def get_user_config_map(self) -> dict[str, Any]: ...

    @abstractmethod
    def get_input_topics(self) -> list[str]: ...

    @abstractmethod
    def get_output_topic(self) -> str | None: ...

    @abstractmethod
    def publish(
        self,
        topic_name: str,
        message: Any,
        serde_class_name: str = "serde.IdentitySerDe",
        properties: dict[str, str] | None = None,
        compression_type: Any = None,
        callback: Any = None,
        message_conf: dict[str, Any] | None = None,
    ) -> None:
        """Publish ``message`` (serialized by IdentitySerDe) to ``topic_name``, effectively
        once per input message and call."""

    @abstractmethod
    def incr_counter(self, key: str, amount: int) -> None:
        """Add ``amount`` to the function's counter ``key`` (created at 0)."""

    @abstractmethod
    def get_counter(self, key: str) -> int:
        """The counter's value (0: never incremented)."""

    @abstractmethod
    def del_counter(self, key: str) -> None: ...

    @abstractmethod
    def put_state(self, key: str, value: bytes) -> None:
        """Store ``value`` (bytes, or str as UTF-8) under the function's state ``key``."""

    @abstractmethod
    def get_state(self, key: str) -> bytes | None:
        """The state stored under ``key`` (None: none)."""


class Function(ABC):
    """A Pulsar Function: subclass it and implement ``process(input, context)``."""

    @abstractmethod
    def process(self, input: Any, context: Context) -> Any:  # noqa: A002 - Pulsar's name
        """Handle one message; a return value other than None is published to the output
        topic. An exception fails the message: it is redelivered (after the trigger's
        retry backoff) and dead-lettered past the dead letter policy's maximum."""
