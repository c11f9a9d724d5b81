"""The ``context`` a function's ``process`` gets: Pulsar's Context methods (see
``magnetar.functions.Context``) over one input record, the function's definition, its
counters and state (``ports.FunctionStateAccess``) and a publisher of its outputs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.ports import FunctionStateAccess
from magnetar_wire.functions import Context
from magnetar_wire.ids import parse_message_id

Publish = Callable[[str, bytes, Mapping[str, str] | None, int | None], None]
"""``publish(topic, payload, properties, index)``: one output of the current record, the
``index``-th ``context.publish`` (None: the return value)."""
MAX_KEY_BYTES = 512


def check_key(key: object) -> str:
    if not isinstance(key, str) or not 1 <= len(key.encode()) <= MAX_KEY_BYTES:
        raise ValueError(f"A counter or state key is a string of 1 to {MAX_KEY_BYTES} bytes")
    return key


class FunctionContext(Context):
    """Pulsar's Context for one record (a dict as ``domain.triggers.records`` makes it)."""

    def __init__(
        self,
        config: FunctionConfig,
        record: Mapping[str, Any],
        state: FunctionStateAccess,
        publish: Publish,
        serialize: Callable[[Any], bytes],
    ) -> None:
        self._config = config
        self._record = record
        self._state = state
        self._publish = publish
        self._serialize = serialize
        self._published = 0

    # -- the current message ---------------------------------------------------------------

    def get_message_id(self) -> str:
        return str(self._record["messageId"])

    def get_message_key(self) -> str | None:
        return self._record.get("key")

    def get_message_eventtime(self) -> int:
        return int(self._record.get("eventTime") or 0)

    def get_message_properties(self) -> dict[str, str]:
        return dict(self._record.get("properties") or {})

    def get_current_message_topic_name(self) -> str:
        return str(self._record["topic"])

    def get_message_partition_index(self) -> int:
        return parse_message_id(self.get_message_id())[2]

    # -- the function ----------------------------------------------------------------------

    def get_function_name(self) -> str:
        return self._config.name

    def get_function_tenant(self) -> str:
        return self._config.tenant

    def get_function_namespace(self) -> str:
        return self._config.namespace

    def get_function_id(self) -> str:
        return self._config.fqfn

    def get_instance_id(self) -> int:
        return 0

    def get_function_version(self) -> int:
        return self._config.version

    def get_logger(self) -> logging.Logger:
        return logging.getLogger(f"magnetar.function.{self._config.fqfn}")

    def get_user_config_value(self, key: str) -> Any:
        return self._config.user_config.get(key)

    def get_user_config_map(self) -> dict[str, Any]:
        return dict(self._config.user_config)

    def get_input_topics(self) -> list[str]:
        return list(self._config.inputs)

    def get_output_topic(self) -> str | None:
        return self._config.output

    def get_secret(self, secret_name: str) -> None:
        """Secrets are not supported: always None (as Pulsar without a secrets provider)."""
        return None

    def record_metric(self, metric_name: str, metric_value: float) -> None:
        """Metrics go to the function's logger (no metrics backend)."""
        self.get_logger().info("metric %s=%s", metric_name, metric_value)

    # -- outputs ---------------------------------------------------------------------------

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
        """Publish ``message`` to ``topic_name`` now, effectively once per record and call
        (its n-th publish has a producer of its own). Raises TypeError for a message
        IdentitySerDe cannot serialize, and what producing raises."""
        index = self._published
        self._published += 1
        self._publish(topic_name, self._serialize(message), properties, index)
        if callback is not None:
            callback(None, None)

    # -- counters and state ----------------------------------------------------------------

    def incr_counter(self, key: str, amount: int) -> None:
        self._state.incr_counter(self._config.fqfn, check_key(key), int(amount))

    def get_counter(self, key: str) -> int:
        return self._state.get_counter(self._config.fqfn, check_key(key))

    def del_counter(self, key: str) -> None:
        self._state.del_counter(self._config.fqfn, check_key(key))

    def put_state(self, key: str, value: bytes | str) -> None:
        data = value.encode() if isinstance(value, str) else bytes(value)
        self._state.put_state(self._config.fqfn, check_key(key), data)

    def get_state(self, key: str) -> bytes | None:
        return self._state.get_state(self._config.fqfn, check_key(key))
