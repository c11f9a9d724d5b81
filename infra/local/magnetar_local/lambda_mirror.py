"""The local functions (``magnetar local --function``) as functions of the emulator's Lambda.

A trigger's Lambda target is looked up when the trigger is stored (``GetFunction``, as on
AWS: ``adapters.aws.lambda_target``), and the handlers look in the emulator's Lambda. So
each local function also exists there, under its name: an empty package that nothing runs
(the trigger driver calls the Python handler), created when the stack starts and when a
function is registered later (a test's ``local_stack.functions.register``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from typing import Any

log = logging.getLogger("magnetar_local")

ROLE = "magnetar-local-functions"
EMPTY_ZIP = b"PK\x05\x06" + b"\x00" * 18
_TRUST = {
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ]
}


class LambdaMirror:
    """Creates functions of the given names in the emulator's Lambda; names announced
    before ``connect`` are created then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._lambda: Any = None
        self._role_arn = ""

    def connect(self, iam: Any, lambdas: Any) -> None:
        """Start creating, with boto3 clients of the emulator (the role made once)."""
        try:
            role = iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(_TRUST))
        except iam.exceptions.EntityAlreadyExistsException:
            role = iam.get_role(RoleName=ROLE)
        with self._lock:
            self._lambda, self._role_arn = lambdas, role["Role"]["Arn"]
            pending, self._pending = sorted(self._pending), set()
        for name in pending:
            self.announce(name)

    def announce(self, name: str) -> None:
        """Make function ``name`` exist (already there: nothing to do)."""
        with self._lock:
            if self._lambda is None:
                self._pending.add(name)
                return
            lambdas, role_arn = self._lambda, self._role_arn
        with contextlib.suppress(lambdas.exceptions.ResourceConflictException):
            lambdas.create_function(
                FunctionName=name,
                Runtime="python3.12",
                Role=role_arn,
                Handler="local.handler",
                Code={"ZipFile": EMPTY_ZIP},
            )
