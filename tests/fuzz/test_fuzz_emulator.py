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
import requests
import schemathesis
from fuzz_support import OPENAPI, SEED, SETTINGS, ReadBack, every_operation, report, run_case
from hypothesis import settings

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
    with driver.paused() if driver is not None else contextlib.nullcontext():
        yield ReadBack(read_back)
    print(report("emulator", started))


@every_operation(schema)
@settings(SETTINGS, max_examples=EXAMPLES)
def test_every_operation_answers_fuzzed_requests_through_the_aws_adapters_as_documented(
    case, local_stack, stack_state
):
    run_case(case, local_stack.url, "emulator", stack_state)
    if case.method.upper() == "PUT" and case.path.endswith("/compaction"):
        compaction_settled(f"{local_stack.url}{case.path.format(**case.path_parameters)}")
        stack_state.forget()


def compaction_settled(url: str, timeout_s: float = 120.0) -> None:
    """Wait until the compaction a fuzzed PUT may have started (a job in the background,
    writing its status to the cursors table) is no longer RUNNING, so the next request's
    read-back sees only what that request did."""
    deadline = time.monotonic() + timeout_s
    while (answer := requests.get(url, timeout=30)).status_code == 200:
        if answer.json().get("status") != "RUNNING":
            return
        assert time.monotonic() < deadline, f"the compaction of {url} still runs"
        time.sleep(0.1)  # the job reports through the status item; nothing to wait on
