"""The authorizer's sample events (events/authorizer/) and their answers, shared by the
in-memory tests and the emulator tests of the authorizer."""

from __future__ import annotations

import json
from pathlib import Path

EVENTS = Path(__file__).resolve().parents[2] / "events" / "authorizer"
DEMO_KEY = "bWFnbmV0YXItZGVtby1rZXktbm90LWEtc2VjcmV0ISE="
"""The demo secret key the sample tokens are signed with (base64; events/authorizer/README)."""
EXPECTED = {
    "token_valid": {"isAuthorized": True, "context": {"role": "app"}},
    "token_expired": {"isAuthorized": False},
    "token_tampered": {"isAuthorized": False},
    "token_wrong_key": {"isAuthorized": False},
    "not_bearer": {"isAuthorized": False},
    "iam_expired": {"isAuthorized": False},
}


def event(name: str, authorization: str | None = None) -> dict:
    """The sample event ``name``, its Authorization header replaced when given."""
    loaded = json.loads((EVENTS / f"{name}.json").read_text())
    if authorization is not None:
        loaded["headers"]["authorization"] = authorization
        loaded["identitySource"] = [authorization]
    return loaded


def names() -> list[str]:
    return sorted(p.stem for p in EVENTS.glob("*.json"))
