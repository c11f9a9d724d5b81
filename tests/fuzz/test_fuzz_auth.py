"""Fuzzing with authentication on (issue 12): every operation of openapi.yaml against the real
handlers on in-memory adapters with a superuser's token, its bearer scheme required, and
schemathesis's ``ignored_auth`` check: the same request without the token, or with an
invalid one, must be refused (401) — besides the memory lane's checks (no 5xx, answers as
documented, a rejected request changes no stored item)."""

from __future__ import annotations

import base64
import time

import pytest
import schemathesis
import yaml
from fuzz_support import (
    OPENAPI,
    SEED,
    SETTINGS,
    ReadBack,
    every_operation,
    jobs_recorded,
    memory_state,
    report,
    run_case,
)
from hypothesis import settings
from schemathesis.specs.openapi.checks import ignored_auth

from magnetar_local.memory_service import MemoryService, memory_settings
from magnetar_wire import token_keys, tokens

EXAMPLES = 1
SECRET = token_keys.new_secret_key()
SUPERUSER = "admin"


def _required_auth_schema() -> dict:
    # the safe loader on libyaml: 0.06 CPU-s a collecting process, not 0.35
    raw = yaml.load(OPENAPI.read_text(), Loader=yaml.CSafeLoader)
    raw["security"] = [{"bearerAuth": []}]  # authentication on: the token is required
    return raw


schema = schemathesis.openapi.from_dict(
    _required_auth_schema(),
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"mode": "all", "database": "none", "max-examples": EXAMPLES},
            "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
        }
    ),
)


@pytest.fixture(scope="module")
def secured():
    """One service with authentication on (superuser ``admin``) for the lane, its token;
    jobs recorded, not started (``jobs_recorded``)."""
    started = time.monotonic()
    settings_on = memory_settings(
        authentication_enabled=True,
        superuser_roles=(SUPERUSER,),
        token_secret_key="data:;base64," + base64.b64encode(SECRET).decode(),
    )
    with jobs_recorded(), MemoryService(settings_on) as svc:
        token = tokens.create(tokens.SigningKey.secret(SECRET), SUPERUSER)
        yield svc, ReadBack(lambda: memory_state(svc)), {"Authorization": f"Bearer {token}"}
    print(report("auth", started))


@every_operation(schema)
@settings(SETTINGS, max_examples=EXAMPLES)
def test_every_operation_refuses_requests_without_a_valid_token_and_serves_the_superuser(
    case, secured
):
    svc, state, headers = secured
    run_case(case, svc.url, "auth", state, headers=headers, checks=[ignored_auth])
