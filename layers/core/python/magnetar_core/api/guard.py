"""Authentication and authorization at the HTTP edge, for every handler (``make_app``).

With authentication on, each request, before its handler runs:

1. gets its role (``role_of``): the API Gateway authorizer's (``requestContext.authorizer.
   lambda.role`` from the Lambda REQUEST authorizer, or ``...iam.userArn`` on IAM routes),
   else the ``Authorization: Bearer <token>`` header validated with the service's keys
   (defence in depth: a handler called without the authorizer checks the token itself).
   Raises AuthenticationError (401: MissingToken, MalformedToken, BadSignature,
   TokenExpired);
2. must meet its route's requirement (``domain.security.routes.requirement_for`` on the
   route's template, as API Gateway names it): AuthorizationError (403) otherwise, and a
   route nobody classified is denied to every role. A client's routes on a topic (look up,
   produce, consume) in a namespace that does not exist answer TopicNotFound (404) instead,
   as Pulsar's broker, which finds a topic's namespace before it authorizes the lookup: a
   403 always concerns an existing namespace.

Both refusals happen before the handler: nothing changes. With authentication off (the
default, as Pulsar standalone) every request runs as before, with no role.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware

from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.domain.security import Consume, Lookup, Produce, Role
from magnetar_core.domain.security.authentication import authenticate_header
from magnetar_core.domain.security.routes import requirement_for
from magnetar_core.engine import Engine
from magnetar_core.services.credentials import Providers, client_certificate
from magnetar_wire.tokens import BadSignature, MalformedToken, VerificationKeys, bearer_token

ROLE_CONTEXT = "_magnetar_role"
"""The resolver context key the guard leaves the request's role under (None: auth off)."""
LOOKED_UP = (Lookup, Produce, Consume)
"""Requirements of the routes a Pulsar client reaches after looking the topic up."""
NO_KEYS = (
    "this service verifies no tokens (neither TOKEN_SECRET_KEY nor TOKEN_PUBLIC_KEY is "
    "configured): call it through the API's authorizer, or configure the key tokens are "
    "made with"
)


def role_of(event: Mapping[str, Any], keys: VerificationKeys | None, now_s: int,
            providers: Providers | None = None) -> Role:  # fmt: skip
    """The role a payload 2.0 ``event`` proves at ``now_s`` (epoch seconds): the gateway
    authorizer's role when present, else its credentials' (``providers``: Basic, the
    client certificate, the anonymous role; a Bearer token's ``sub`` verified with
    ``keys``). Raises MissingToken, MalformedToken (also for an authorizer role that is not
    a valid role), BadSignature (also when ``keys`` is None), TokenExpired, BadCredentials,
    BadCertificate."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    given = (authorizer.get("lambda") or {}).get("role") or (authorizer.get("iam") or {}).get(
        "userArn"
    )
    if given is not None:
        try:
            return Role(given)
        except InvalidMessage as exc:
            raise MalformedToken(f"the authorizer's role is not valid: {exc.message}") from None
    header = _header(event.get("headers") or {}, "authorization")

    def token_role(authorization: str | None) -> Role:
        if keys is None:
            bearer_token(authorization)  # MissingToken / MalformedToken first, as with keys
            raise BadSignature(NO_KEYS)
        return authenticate_header(authorization, keys, now_s)

    certificate = client_certificate(event)
    return (providers or Providers()).role_of(header, certificate, token_role, now_s)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def route_template(path_rule: str) -> str:
    """A resolver route (``/v1/<domain>/.../consumers/<consumer_id>``) as API Gateway and
    ``domain.security.routes`` name it (``/v1/{domain}/.../consumers/{consumerId}``)."""
    return re.sub(r"<(\w+)>", lambda m: "{" + camel_name(m.group(1)) + "}", path_rule)


def served_route(app: APIGatewayHttpResolver, event: Mapping[str, Any]) -> tuple[str, dict[str, str]] | None:  # fmt: skip
    """The route key (``GET /admin/v2/{domain}/...``) and URL-decoded path parameters of
    ``app``'s route that ``event``'s method and ``rawPath`` take, as Powertools picks it
    (literal routes first, then in declaration order: its route lists); None for none."""
    method = str(((event.get("requestContext") or {}).get("http") or {}).get("method", "")).upper()
    path = str(event.get("rawPath") or "")
    for route in [*app._static_routes, *app._dynamic_routes]:
        found = route.rule.match(path) if route.method.upper() == method else None
        if found is not None:
            arguments = {
                camel_name(name): unquote(value) for name, value in found.groupdict().items()
            }
            return f"{method} {route_template(route.path)}", arguments
    return None


def camel_name(name: str) -> str:
    """A resolver's parameter name as API Gateway's (``consumer_id`` -> ``consumerId``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_UNROUTED = APIGatewayHttpResolver._compile_regex(".*").pattern
"""The pattern of the stand-in route Powertools runs the middlewares with when no route
matches (its not-found handler: our 404 ``NotFound``). Behind ``ANY /admin/{proxy+}`` the
admin app gets every admin path no other function serves; API Gateway's authorizer has
already authenticated the caller."""


def guard(engine: Callable[[], Engine]) -> Callable[[APIGatewayHttpResolver, NextMiddleware], Response]:  # fmt: skip
    """The middleware that authenticates and authorizes each request on ``engine()``'s
    security (see the module's docstring); it runs after the path arguments are decoded.
    Raises AuthenticationError (401), AuthorizationError (403), InvalidTopicName (400),
    TopicNotFound (404: a looked-up topic's namespace does not exist, for a denied role)."""

    def middleware(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response:
        route = app.context.get("_route")
        if route is not None and route.rule.pattern == _UNROUTED:
            return next_middleware(app)  # no route: the 404, which tells nothing, for anyone
        current = engine()
        security = current.security
        if not security.enabled:
            app.append_context(**{ROLE_CONTEXT: None})
            return next_middleware(app)
        now_ms = current.runtime.now_ms()
        event = app.current_event.raw_event
        role = role_of(event, security.keys, int(now_ms // 1000), security.providers)
        arguments: dict[str, str] = app.context.get("_route_args", {})
        method, path = (route.method, route.path) if route is not None else ("", "")
        params = {camel_name(name): value for name, value in arguments.items()}
        requirement = requirement_for(method, route_template(path), params)
        decision = security.authorization.decide(role, requirement, now_ms)
        if not decision.allowed and isinstance(requirement, LOOKED_UP):
            current.topics.require_namespace(requirement.topic)  # TopicNotFound first
        decision.enforce()
        app.append_context(**{ROLE_CONTEXT: role})
        return next_middleware(app)

    return middleware


def caller_role(app: APIGatewayHttpResolver) -> str | None:
    """The role the guard authenticated for the current request (None: authentication is
    off). Consumers and producers are bound to it when created."""
    role = app.context.get(ROLE_CONTEXT)
    return role.name if isinstance(role, Role) else None
