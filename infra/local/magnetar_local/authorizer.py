"""API Gateway's Lambda authorizer step, as the local gateway can run it (off by default).

On AWS every route runs ``AuthorizerFunction`` first (template.yaml's ``DefaultAuthorizer``):
a request without the identity source (the ``Authorization`` header) is answered 401
``{"message": "Unauthorized"}`` without calling it; otherwise the answer cached for that header
(``cache_s`` seconds), or the function's answer to a payload 2.0 REQUEST authorizer event, is
used: ``isAuthorized`` false is a 403 ``{"message": "Forbidden"}``, true puts the answer's
``context`` in the route event as ``requestContext.authorizer.lambda``. Without identity
source (template.yaml's condition OpenAuthorizer: an anonymous role or client certificates)
every request is sent to the function, with or without the header, and nothing is cached.
``LocalAuthorizer`` does the same with the real authorizer handler, so the whole AWS path
runs locally (``Gateway.use_authorizer``); ``magnetar local`` does not turn it on (the
handlers check tokens themselves there).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from magnetar_core.api.authorizer_cache import AuthorizerCache
from magnetar_local.events import HttpResponse, LambdaContext, json_response
from magnetar_local.handlers import Handler, HandlerLoader


class LocalAuthorizer:
    """Runs the authorizer function ``function`` of ``loader`` (or ``handler``, a callable
    (event, context), instead of its containers) before each route's handler, with API
    Gateway's cache (``cache_s`` seconds per ``Authorization`` value; 0: none). ``clock_s``:
    monotonic seconds. ``identity_source`` False: no identity source (API Gateway then
    allows no cache), every request is sent to the function. ``invocations`` counts the
    authorizer's calls."""

    def __init__(
        self,
        loader: HandlerLoader,
        function: str = "AuthorizerFunction",
        cache_s: int = 300,
        clock_s: Callable[[], float] = time.monotonic,
        handler: Handler | None = None,
        identity_source: bool = True,
    ) -> None:
        self._loader, self._function = loader, function
        self._handler = handler
        self._identity_source = identity_source
        self._answers = AuthorizerCache(cache_s if identity_source else 0, clock_s)
        self.invocations = 0

    def admit(self, event: dict[str, Any], region: str, account_id: str) -> HttpResponse | None:
        """None when the request may go on (``event`` then carries the authorizer's context),
        else API Gateway's 401 or 403. A failing authorizer is a 500, as on AWS."""
        header = (event.get("headers") or {}).get("authorization")
        if not header and self._identity_source:
            return json_response(401, {"message": "Unauthorized"})
        answer = self._answers.get(header) if header and self._identity_source else None
        if answer is None:
            try:
                answer = self._invoke(event, header, region, account_id)
            except Exception:  # noqa: BLE001 - API Gateway answers 500 for a failed authorizer
                return json_response(500, {"message": "Internal Server Error"})
            if header and self._identity_source:
                self._answers.put(header, answer)
        if answer.get("isAuthorized") is not True:
            return json_response(403, {"message": "Forbidden"})
        event["requestContext"]["authorizer"] = {"lambda": dict(answer.get("context") or {})}
        return None

    def _invoke(self, event: dict[str, Any], header: str | None, region: str, account_id: str) -> dict[str, Any]:  # fmt: skip
        source = header if self._identity_source else None
        request = authorizer_event(event, source, region, account_id)
        self.invocations += 1
        if self._handler is not None:
            answer = self._handler(
                request, LambdaContext(self._function, 256, 10, region, account_id)
            )
        else:
            spec = self._loader.functions[self._function]
            context = LambdaContext(spec.name, spec.memory_mb, spec.timeout_s, region, account_id)
            with self._loader.lease(self._function) as handler:
                answer = handler(request, context)
        if not isinstance(answer, dict):
            raise TypeError(f"the authorizer answered {type(answer).__name__}, not a JSON object")
        return answer


def authorizer_event(event: dict[str, Any], header: str | None, region: str, account_id: str) -> dict[str, Any]:  # fmt: skip
    """The payload 2.0 REQUEST authorizer event API Gateway sends for route event ``event``
    (``header``: the identity source's value; None: the authorizer has none)."""
    context = event["requestContext"]
    method, path = context["http"]["method"], event["rawPath"]
    route_arn = f"arn:aws:execute-api:{region}:{account_id}:{context.get('apiId', 'local')}/$default/{method}{path}"
    answer = {
        "version": "2.0",
        "type": "REQUEST",
        "routeArn": route_arn,
        "identitySource": [] if header is None else [header],
        "routeKey": event["routeKey"],
        "rawPath": path,
        "rawQueryString": event.get("rawQueryString", ""),
        "headers": dict(event.get("headers") or {}),
        "requestContext": copy.deepcopy(context),
    }
    for optional in ("queryStringParameters", "pathParameters", "stageVariables"):
        if optional in event:
            answer[optional] = copy.deepcopy(event[optional])
    return answer
