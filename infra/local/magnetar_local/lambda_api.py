"""Lambda's Invoke API on the local gateway, for the functions AWS services invoke.

On AWS, S3 notifications, SNS subscriptions, EventBridge rules and schedules invoke
``IngestFunction`` (inbound sources); nothing does locally (moto delivers no
notification). The gateway therefore serves Lambda's own API for those functions, as
``sam local start-lambda`` does: ``POST /2015-03-31/functions/{name}/invocations`` with the
event as the body, so ``magnetar invoke``, boto3's ``lambda.invoke`` or ``aws lambda invoke``
with ``--endpoint-url`` run the real handler in-process on a sample event (``events/inbound/``).

Only functions the template wires to an AWS event source (``EVENT_SOURCE_TYPES``) are
invocable, by logical id, physical name or ARN; the HTTP API's functions are reached through
their routes (and the authorizer), and the log stream's fan-out is stood in for by the
trigger driver. Requests must come from the loopback interface (on AWS only IAM principals
may invoke). Answers follow Lambda's: ``RequestResponse`` 200 with the handler's result (a
raised error: 200 with ``X-Amz-Function-Error: Unhandled`` and Lambda's error document),
``Event`` 202 (run in a thread, a failure logged; AWS would retry it twice), ``DryRun`` 204;
errors with ``x-amzn-ErrorType`` and 4xx.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import threading
import traceback
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from magnetar_local.events import HttpRequest, HttpResponse, LambdaContext
from magnetar_local.handlers import HandlerLoader
from magnetar_local.template import LocalTemplate

log = logging.getLogger("magnetar_local.gateway")

INVOKE_PATH = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations$")
EVENT_SOURCE_TYPES = frozenset(
    {"S3", "SNS", "SQS", "EventBridgeRule", "CloudWatchEvent", "Schedule", "ScheduleV2"}
)
"""SAM event types whose service invokes the function (not HttpApi, not the DynamoDB stream)."""
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def invocable_functions(template: LocalTemplate) -> dict[str, str]:
    """Logical id, physical name and ARN of each function fed by an AWS event source ->
    its logical id."""
    names: dict[str, str] = {}
    for logical_id, spec in template.functions.items():
        events = (template.resources[logical_id].get("Properties") or {}).get("Events") or {}
        if any(e.get("Type") in EVENT_SOURCE_TYPES for e in events.values()):
            arn = f"arn:aws:lambda:{template.region}:{template.account_id}:function:{spec.name}"
            names.update({logical_id: logical_id, spec.name: logical_id, arn: logical_id})
    return names


def _error(status: int, code: str, message: str) -> HttpResponse:
    body = json.dumps({"Type": "User", "message": message}).encode()
    return HttpResponse(
        status, [("Content-Type", "application/json"), ("x-amzn-ErrorType", code)], body
    )


class LambdaInvokeApi:
    """Serves Invoke for ``functions`` (name -> logical id) with ``loader``'s handlers."""

    def __init__(
        self,
        loader: HandlerLoader,
        functions: Mapping[str, str],
        region: str = "us-east-1",
        account_id: str = "123456789012",
    ) -> None:
        self._loader = loader
        self._functions = dict(functions)
        self._region, self._account_id = region, account_id

    @staticmethod
    def matches(request: HttpRequest) -> bool:
        """Whether ``request`` is a Lambda Invoke request (any method: others get 405)."""
        return INVOKE_PATH.match(request.raw_path) is not None

    def invoke(self, request: HttpRequest) -> HttpResponse:
        """Run the named function on the request's body (see the module); never raises."""
        name = unquote(INVOKE_PATH.match(request.raw_path)["name"])  # type: ignore[index]
        if request.method != "POST":
            return _error(405, "MethodNotAllowedException", "Invoke takes POST")
        if request.source_ip not in LOOPBACK:
            return _error(403, "AccessDeniedException", "Invoke is served to loopback only")
        logical_id = self._functions.get(name)
        if logical_id is None:
            known = ", ".join(sorted(n for n, lid in self._functions.items() if n == lid))
            return _error(
                404,
                "ResourceNotFoundException",
                f"Function not found: {name}. Locally only the functions AWS services invoke "
                f"can be: {known or 'none'}; the API's functions are reached by their routes",
            )
        headers = {k.lower(): v for k, v in request.headers}
        kind = headers.get("x-amz-invocation-type", "RequestResponse")
        if kind not in ("RequestResponse", "Event", "DryRun"):
            return _error(
                400,
                "InvalidParameterValueException",
                f"InvocationType must be RequestResponse, Event or DryRun, not {kind!r}",
            )
        try:
            event = json.loads(request.body or b"{}")
        except ValueError:
            return _error(
                400, "InvalidRequestContentException", "Could not parse request body into json"
            )
        if kind == "DryRun":
            return HttpResponse(204)
        if kind == "Event":
            context = contextvars.copy_context()  # the gateway's metrics sink goes along
            threading.Thread(
                target=context.run, args=(self._run_logged, logical_id, event), daemon=True
            ).start()
            return HttpResponse(202)
        return self._answer(logical_id, event)

    def _run(self, logical_id: str, event: Any) -> Any:
        spec = self._loader.functions[logical_id]
        context = LambdaContext(
            spec.name, spec.memory_mb, spec.timeout_s, self._region, self._account_id
        )
        with self._loader.lease(logical_id) as handler:
            return handler(event, context)

    def _run_logged(self, logical_id: str, event: Any) -> None:
        try:
            self._run(logical_id, event)
        except Exception:
            log.exception("asynchronous invocation of %s failed", logical_id)

    def _answer(self, logical_id: str, event: Any) -> HttpResponse:
        headers = [("Content-Type", "application/json"), ("X-Amz-Executed-Version", "$LATEST")]
        try:
            result = self._run(logical_id, event)
        except Exception as error:
            log.exception("invocation of %s failed", logical_id)
            document = {
                "errorMessage": str(error),
                "errorType": type(error).__name__,
                "stackTrace": traceback.format_tb(error.__traceback__),
            }
            headers.append(("X-Amz-Function-Error", "Unhandled"))
            return HttpResponse(200, headers, json.dumps(document).encode())
        return HttpResponse(200, headers, json.dumps(result, default=str).encode())
