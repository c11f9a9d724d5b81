"""Avro schemas of the schema registry tests: ``User`` v1 and the two ways to add a field."""

from __future__ import annotations

import json


def avro(*fields: dict) -> dict:
    """The registry's body of an Avro ``User`` record: ``name`` (string) and ``fields``."""
    definition = {"type": "record", "name": "User", "fields": [
        {"name": "name", "type": "string"}, *fields]}  # fmt: skip
    return {"type": "AVRO", "schema": json.dumps(definition), "properties": {}}


V1 = avro()
V2_REQUIRED = avro({"name": "age", "type": "int"})
"""v1 plus a field without a default: a reader of it cannot read v1 data (BACKWARD refuses it)."""
V2_DEFAULT = avro({"name": "age", "type": "int", "default": 0})
"""v1 plus a field with a default: compatible both ways."""
