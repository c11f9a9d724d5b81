"""Pulsar's schema compatibility strategies and the check a new schema must pass against a
topic's live versions (oldest first) before it is stored.

BACKWARD: the new schema reads data written with the latest; FORWARD: the latest reads data
written with the new one; FULL: both; the ``_TRANSITIVE`` forms check every live version
instead of the latest. ALWAYS_COMPATIBLE accepts anything, ALWAYS_INCOMPATIBLE any new
schema once one exists. UNDEFINED (a namespace that set none) applies ``DEFAULT``, FULL, as
Pulsar's broker default ``schemaCompatibilityStrategy``. AVRO and JSON definitions are
compared with Avro's resolution rules (``avro``); other types are compatible when the type
is the same (Pulsar's default check; KEY_VALUE parts are not compared apart).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.schemas.avro import can_read
from magnetar_core.domain.schemas.data import AVRO_BASED, SchemaData

STRATEGIES = (
    "UNDEFINED", "ALWAYS_INCOMPATIBLE", "ALWAYS_COMPATIBLE", "BACKWARD", "FORWARD", "FULL",
    "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE",
)  # fmt: skip
DEFAULT = "FULL"


def parse_strategy(value: object) -> str:
    """A strategy name from a request body (a JSON string); raises InvalidMessage (400)."""
    if value not in STRATEGIES:
        raise InvalidMessage(f"The schema compatibility strategy must be one of {', '.join(STRATEGIES)}; got {value!r}")  # fmt: skip
    return str(value)


def applied(strategy: str | None) -> str:
    """The strategy that applies for a namespace's setting (None or UNDEFINED: DEFAULT)."""
    return DEFAULT if strategy in (None, "UNDEFINED") else str(strategy)


def _pair(reader: SchemaData, writer: SchemaData) -> str | None:
    """None when data written with ``writer`` reads with ``reader``, else why not."""
    if reader.schema_type != writer.schema_type:
        return f"the schema type {writer.schema_type} is not {reader.schema_type}"
    if reader.schema_type not in AVRO_BASED:
        return None
    return can_read(json.loads(reader.definition), json.loads(writer.definition))


def incompatibility(strategy: str, live: Sequence[SchemaData], new: SchemaData) -> str | None:
    """None when ``new`` may follow the ``live`` versions (oldest first, tombstones already
    trimmed) under ``strategy`` (UNDEFINED: DEFAULT), else why not, in words."""
    strategy = applied(strategy)
    if not live or strategy == "ALWAYS_COMPATIBLE":
        return None
    if strategy == "ALWAYS_INCOMPATIBLE":
        return "the strategy ALWAYS_INCOMPATIBLE refuses every new schema"
    against = list(live) if strategy.endswith("_TRANSITIVE") else [live[-1]]
    mode = strategy.removesuffix("_TRANSITIVE")
    for old in reversed(against):
        if mode in ("BACKWARD", "FULL"):
            why = _pair(new, old)
            if why:
                return f"{strategy}: the new schema cannot read data written with an existing one ({why})"  # fmt: skip
        if mode in ("FORWARD", "FULL"):
            why = _pair(old, new)
            if why:
                return f"{strategy}: an existing schema cannot read data written with the new one ({why})"  # fmt: skip
    return None
