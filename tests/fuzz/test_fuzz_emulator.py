"""Fuzzing (issue 11) on the emulator-backed stack: a small schemathesis pass over every
operation of openapi.yaml through the local gateway to the AWS adapters (DynamoDB, S3, Step
Functions on the embedded moto server), with the checks of the memory lane.

The stack is the worker's shared one (other tests' topics, and their delay timers, live in
it), so requests name one tenant and namespace of their own (``fuzz`` / ``emulator``), and a
rejected request is checked to change no item and no object of that namespace (every table
and the bucket read back, filtered to it).
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
import schemathesis
from fuzz_support import (
    OPENAPI,
    SEED,
    SETTINGS,
    ReadBack,
    every_operation,
    jobs_recorded,
    report,
    run_case,
)
from hypothesis import settings

from magnetar_local.testing import _handler_engines

TENANT, NAMESPACE = "fuzz", "emulator"
SCOPE = f"/{TENANT}/{NAMESPACE}"
"""Every key of the namespace's items and objects holds this (``persistent://fuzz/emulator``,
``entries/persistent/fuzz/emulator/...``)."""
EXAMPLES = 1

schema = schemathesis.openapi.from_path(
    OPENAPI,
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"mode": "all", "database": "none", "max-examples": EXAMPLES},
            "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
            "parameters": {"path.tenant": TENANT, "path.namespace": NAMESPACE},
        }
    ),
)


@pytest.fixture(scope="module")
def stack_state(local_stack, aws_clients):
    """Reads the fuzz namespace's items and objects back from the emulator (the namespace
    created first: topics are created only in an existing namespace)."""
    local_stack.create_namespaces(f"{TENANT}/{NAMESPACE}")
    env = local_stack.environment
    tables = [env["TOPICS_TABLE"], env["LOG_TABLE"], env["CURSORS_TABLE"]]
    bucket = env["ENTRIES_BUCKET"]
    started = time.monotonic()

    def read_back() -> dict[str, Any]:
        state: dict[str, Any] = {}
        for table in tables:
            pages = aws_clients.dynamodb.get_paginator("scan").paginate(
                TableName=table,
                FilterExpression="contains(pk, :scope)",
                ExpressionAttributeValues={":scope": {"S": SCOPE}},
            )
            state[table] = sorted(
                json.dumps(item, sort_keys=True, default=repr)
                for page in pages
                for item in page["Items"]
            )
        pages = aws_clients.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        state[bucket] = sorted(
            (o["Key"], o["ETag"]) for p in pages for o in p.get("Contents", []) if SCOPE in o["Key"]
        )
        return state

    # the stack's trigger driver would write cursors of triggers the fuzzer made between
    # the reads around a request: it holds still while this module fuzzes
    driver = local_stack.triggers
    with (
        driver.paused() if driver is not None else contextlib.nullcontext(),
        jobs_recorded() as launcher,
        pytest.MonkeyPatch.context() as patch,
    ):
        for engine in _handler_engines():  # containers loaded before: their launcher too
            patch.setattr(engine.compaction, "_launcher", launcher)
        yield ReadBack(read_back)
    print(report("emulator", started) + f", {len(launcher.started)} jobs recorded")


@every_operation(schema)
@settings(SETTINGS, max_examples=EXAMPLES)
def test_every_operation_answers_fuzzed_requests_through_the_aws_adapters_as_documented(
    case, local_stack, stack_state
):
    run_case(case, local_stack.url, "emulator", stack_state)
