"""The service checks of ``magnetar verify``, over plain HTTP: the service answers with the
credentials given; admin creates, lists and deletes a topic and its stats show the backlog;
with authentication on, no token is 401 and a role without the grant 403 (and neither
changes anything); and the run's topics are deleted at the end (``cleanup``).
"""

from __future__ import annotations

import base64

from magnetar.cli.verify.context import Answer, CheckFailed, CheckSkipped, Deadline, VerifyContext

SUBSCRIPTION = "verify"


def service(ctx: VerifyContext, deadline: Deadline) -> str:
    """The namespace's topics answer 200 with the credentials given (else why not, and
    what to do)."""
    path = ctx.namespace_topics_path()
    answer = ctx.service.call("GET", path)
    if answer.status == 401:
        raise CheckFailed(f"the service has authentication on and refused the credentials given "
                          f"({answer.said()}); give a token with --auth-params token:<jwt> or file:///path")  # fmt: skip
    if answer.status == 403:
        raise CheckFailed(f"the role may not list {ctx.namespace} ({answer.said()}); verify needs "
                          "a role that administers the namespace (a tenant admin or a superuser)")  # fmt: skip
    if answer.status == 404:
        raise CheckFailed(f"{answer.said()}; create the namespace or pick one with --namespace")
    if answer.status != 200 or not isinstance(answer.body, list):
        raise CheckFailed(f"GET {path} answered {answer.said()}")
    return f"GET {path} answered 200 ({len(answer.body)} topics)"


def _topics(ctx: VerifyContext) -> list[str]:
    body = ctx.service.expect("GET", ctx.namespace_topics_path(), ok=(200,))
    return [t for t in body if isinstance(t, str)]


def admin(ctx: VerifyContext, deadline: Deadline) -> str:
    topic = ctx.topic("admin")
    path = ctx.admin_path(topic)
    ctx.service.expect("PUT", path)
    if topic not in _topics(ctx):
        raise CheckFailed(f"{topic} was created (PUT answered) but the namespace does not list it")
    ctx.service.expect("PUT", f"{path}/subscription/{SUBSCRIPTION}")
    producer = ctx.client.create_producer(topic)
    try:
        for i in range(2):
            producer.send(f"backlog-{i}".encode())
    finally:
        producer.close()
    stats = ctx.service.expect("GET", f"{path}/stats", ok=(200,))
    backlog = stats.get("subscriptions", {}).get(SUBSCRIPTION, {}).get("msgBacklog")
    if backlog != 2 or stats.get("msgInCounter") != 2:
        raise CheckFailed(f"after 2 messages, stats show msgInCounter {stats.get('msgInCounter')} "
                          f"and the subscription's msgBacklog {backlog} (expected 2 and 2)")  # fmt: skip
    ctx.service.expect("DELETE", f"{path}?force=true")
    if topic in _topics(ctx):
        raise CheckFailed(f"{topic} was deleted (DELETE answered) but the namespace still lists it")
    return "created, listed, 2 produced: stats msgBacklog 2; deleted, no longer listed"


def _authentication_off(ctx: VerifyContext) -> Answer:
    """The answer to a request without credentials; CheckSkipped when it was served."""
    path = ctx.namespace_topics_path()
    answer = ctx.service.call("GET", path, headers={})
    if answer.status == 200:
        raise CheckSkipped(f"authentication is off: GET {path} without a token answered 200")
    return answer


def _produce_body() -> dict[str, object]:
    return {"messages": [{"payload": base64.b64encode(b"must-not-be-stored").decode()}]}


def _nothing_stored(ctx: VerifyContext, topic: str) -> None:
    """The refused produce created no topic (stats: 404) and stored nothing."""
    answer = ctx.service.call("GET", ctx.admin_path(topic) + "/stats")
    if answer.status == 200 and isinstance(answer.body, dict):
        raise CheckFailed(f"a refused produce left {topic} with msgInCounter {answer.body.get('msgInCounter')}")  # fmt: skip
    if answer.status != 404:
        raise CheckFailed(f"the stats of {topic} answered {answer.said()} (expected 404: no topic)")


def auth_no_token(ctx: VerifyContext, deadline: Deadline) -> str:
    listed = _authentication_off(ctx)
    if listed.status != 401 or listed.error != "AuthenticationError":
        raise CheckFailed(f"GET without a token answered {listed.said()} (expected 401 AuthenticationError)")  # fmt: skip
    topic = ctx.topic("auth-401")
    produced = ctx.service.call("POST", ctx.data_path(topic) + "/messages", _produce_body(), headers={})  # fmt: skip
    if produced.status != 401 or produced.error != "AuthenticationError":
        raise CheckFailed(f"a produce without a token answered {produced.said()} (expected 401)")
    _nothing_stored(ctx, topic)
    return "GET topics and a produce without a token: 401 AuthenticationError; nothing stored"


def auth_denied_role(ctx: VerifyContext, deadline: Deadline) -> str:
    _authentication_off(ctx)
    if ctx.denied_headers is None:
        raise CheckSkipped("no token of a role without grants: give one with --denied-auth-params "
                           "(e.g. `magnetar tokens create --subject verify-nobody ...`)")  # fmt: skip
    topic = ctx.topic("auth-403")
    produced = ctx.service.call("POST", ctx.data_path(topic) + "/messages", _produce_body(),
                                headers=ctx.denied_headers)  # fmt: skip
    if produced.status == 401:
        raise CheckFailed(f"the token of --denied-auth-params was refused as a token ({produced.said()}); "
                          "give a valid token of a role without grants")  # fmt: skip
    if produced.status != 403 or produced.error != "AuthorizationError":
        raise CheckFailed(f"a produce by a role without the grant answered {produced.said()} (expected 403)")  # fmt: skip
    _nothing_stored(ctx, topic)
    return "a produce by a role without the grant: 403 AuthorizationError; nothing stored"


def cleanup(ctx: VerifyContext, deadline: Deadline) -> str:
    """Delete every topic of the run (the checks' and the dead letter topic) and check the
    namespace lists none of them."""
    ours = [t for t in _topics(ctx) if t.startswith(ctx.topic_prefix)]
    refused = []
    for topic in ours:
        answer = ctx.service.call("DELETE", ctx.admin_path(topic) + "?force=true")
        if answer.status not in (204, 404):
            refused.append(f"{topic}: {answer.said()}")
    left = [t for t in _topics(ctx) if t.startswith(ctx.topic_prefix)]
    if refused or left:
        raise CheckFailed(
            f"{len(left)} of the run's topics are left: " + "; ".join(refused or left)
        )
    return f"deleted the run's {len(ours)} topics"
