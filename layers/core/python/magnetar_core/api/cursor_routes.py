"""The admin function's subscription routes (Pulsar's paths under
``/admin/v2/{domain}/{tenant}/{namespace}/{topic}``): skip, skip_all, expireMessages (one
subscription or all), resetcursor (a time or a message id body), and PUT a subscription.
Registered on the admin app by ``register``; each answers 204 as Pulsar, or a Pulsar-named
error (``services.admin.subscriptions`` says which) having changed nothing. And the reads
that consume nothing: peek (``subscription/{subscription}/position/{n}``),
``examinemessage`` and ``ledger/{ledgerId}/entry/{entryId}`` (``api.peek_views``). And a
namespace's: ``clearBacklog[/{subscription}]`` and ``unsubscribe/{subscription}``."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from magnetar_core.api import bodies, http, peek_views, request
from magnetar_core.engine import Engine
from magnetar_core.services.peeking import Peeked

TOPIC = "/admin/v2/<domain>/<tenant>/<namespace>/<topic>"
SUBSCRIPTION = TOPIC + "/subscription/<subscription>"
NAMESPACE = "/admin/v2/namespaces/<tenant>/<namespace>"


def register(app: APIGatewayHttpResolver, engine: Callable[[], Engine]) -> None:
    """Add the subscription routes to ``app``, served by ``engine()``'s admin (a reset of
    a cursor wakes the notification channel's sleepers there)."""
    topic_of = request.topic_of

    @app.post(SUBSCRIPTION + "/skip/<num_messages>")
    def skip(domain: str, tenant: str, namespace: str, topic: str, subscription: str, num_messages: str) -> Response:  # fmt: skip
        entries = bodies.path_int(num_messages, "numMessages")
        name = topic_of(domain, tenant, namespace, topic)
        engine().admin.cursors.skip(name, subscription, entries)
        return http.no_content()

    @app.post(SUBSCRIPTION + "/skip_all")
    def skip_all(domain: str, tenant: str, namespace: str, topic: str, subscription: str) -> Response:  # fmt: skip
        name = topic_of(domain, tenant, namespace, topic)
        engine().admin.cursors.clear_backlog(name, subscription)
        return http.no_content()

    @app.post(SUBSCRIPTION + "/expireMessages/<expire_time_in_seconds>")
    def expire(domain: str, tenant: str, namespace: str, topic: str, subscription: str, expire_time_in_seconds: str) -> Response:  # fmt: skip
        seconds = bodies.path_int(expire_time_in_seconds, "expireTimeInSeconds")
        name = topic_of(domain, tenant, namespace, topic)
        engine().admin.cursors.expire(name, subscription, seconds)
        return http.no_content()

    @app.post(TOPIC + "/all_subscription/expireMessages/<expire_time_in_seconds>")
    def expire_all(domain: str, tenant: str, namespace: str, topic: str, expire_time_in_seconds: str) -> Response:  # fmt: skip
        seconds = bodies.path_int(expire_time_in_seconds, "expireTimeInSeconds")
        engine().admin.cursors.expire(topic_of(domain, tenant, namespace, topic), None, seconds)
        return http.no_content()

    @app.post(SUBSCRIPTION + "/resetcursor/<timestamp>")
    def reset_to_time(domain: str, tenant: str, namespace: str, topic: str, subscription: str, timestamp: str) -> Response:  # fmt: skip
        timestamp_ms = bodies.path_int(timestamp, "timestamp")
        name = topic_of(domain, tenant, namespace, topic)
        engine().admin.cursors.reset_to_time(name, subscription, timestamp_ms)
        return http.no_content()

    @app.post(SUBSCRIPTION + "/resetcursor")
    def reset_to_id(domain: str, tenant: str, namespace: str, topic: str, subscription: str) -> Response:  # fmt: skip
        message_id, inclusive = bodies.message_id(request.json_body(app))
        name = topic_of(domain, tenant, namespace, topic)
        engine().admin.cursors.reset_to_id(name, subscription, message_id, inclusive)
        return http.no_content()

    @app.put(SUBSCRIPTION)
    def create(domain: str, tenant: str, namespace: str, topic: str, subscription: str) -> Response:  # fmt: skip
        message_id, _inclusive = bodies.message_id(request.json_body(app), default="latest")
        name = topic_of(domain, tenant, namespace, topic)
        engine().admin.cursors.create(name, subscription, message_id)
        return http.no_content()

    @app.get(SUBSCRIPTION + "/position/<message_position>")
    def peek(domain: str, tenant: str, namespace: str, topic: str, subscription: str, message_position: str) -> Response:  # fmt: skip
        position = bodies.path_int(message_position, "messagePosition")
        name = topic_of(domain, tenant, namespace, topic)
        return _peeked(engine().admin.peek.nth_in_backlog(name, subscription, position))

    @app.get(TOPIC + "/examinemessage")
    def examine(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        initial = request.choice_query(app, "initialPosition", ("earliest", "latest"), "latest")
        position = request.int_query(app, "messagePosition") or 1
        name = topic_of(domain, tenant, namespace, topic)
        return _peeked(engine().admin.peek.examine(name, initial, position))

    @app.get(TOPIC + "/ledger/<ledger_id>/entry/<entry_id>")
    def by_id(domain: str, tenant: str, namespace: str, topic: str, ledger_id: str, entry_id: str) -> Response:  # fmt: skip
        ledger, entry = bodies.path_int(ledger_id, "ledgerId"), bodies.path_int(entry_id, "entryId")
        name = topic_of(domain, tenant, namespace, topic)
        return _peeked(engine().admin.peek.by_id(name, ledger, entry))

    def _peeked(peeked: Peeked) -> Response:
        """Pulsar's answer, or the decoded JSON shape when the request asks for JSON."""
        accept = app.current_event.headers.get("accept")
        return peek_views.message_response(peeked, peek_views.wants_json(accept))

    @app.post(NAMESPACE + "/clearBacklog")
    def clear_namespace_backlog(tenant: str, namespace: str) -> Response:
        engine().admin.cursors.clear_namespace_backlog(tenant, namespace, None)
        return http.no_content()

    @app.post(NAMESPACE + "/clearBacklog/<subscription>")
    def clear_namespace_subscription_backlog(tenant: str, namespace: str, subscription: str) -> Response:  # fmt: skip
        engine().admin.cursors.clear_namespace_backlog(tenant, namespace, subscription)
        return http.no_content()

    @app.post(NAMESPACE + "/unsubscribe/<subscription>")
    def unsubscribe_namespace(tenant: str, namespace: str, subscription: str) -> Response:
        engine().admin.cursors.unsubscribe_namespace(tenant, namespace, subscription)
        return http.no_content()
