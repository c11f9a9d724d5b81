"""The admin function's topic verbs (Pulsar's paths under
``/admin/v2/{domain}/{tenant}/{namespace}/{topic}``): ``terminate`` (200: the last message
id), ``terminate/partitions`` (200: each partition's last message id by index), ``unload``
(204), ``truncate`` (204) and ``POST partitions`` (204: grow a partitioned topic). Registered
on the admin app by ``register``; each answers a Pulsar-named error
(``services.admin.topics`` says which) having changed nothing."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from magnetar_core.api import bodies, http, request, views
from magnetar_core.engine import Engine
from magnetar_core.services.admin.topics import TopicAdmin

TOPIC = "/admin/v2/<domain>/<tenant>/<namespace>/<topic>"


def register(app: APIGatewayHttpResolver, engine: Callable[[], Engine]) -> None:
    """Add the topic verbs to ``app``, served by ``engine()``'s admin."""
    topic_of = request.topic_of

    def ops() -> TopicAdmin:
        topic_ops = engine().admin.topic_ops
        assert topic_ops is not None  # Engine.assemble always composes it
        return topic_ops

    @app.post(TOPIC + "/terminate")
    def terminate(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        last = ops().terminate(topic_of(domain, tenant, namespace, topic))
        return http.ok(views.last_message_id(last))

    @app.post(TOPIC + "/terminate/partitions")
    def terminate_partitions(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        lasts = ops().terminate_partitions(topic_of(domain, tenant, namespace, topic))
        return http.ok({str(index): views.last_message_id(last) for index, last in lasts.items()})

    @app.put(TOPIC + "/unload")
    def unload(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        ops().unload(topic_of(domain, tenant, namespace, topic))
        return http.no_content()

    @app.delete(TOPIC + "/truncate")
    def truncate(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        ops().truncate(topic_of(domain, tenant, namespace, topic))
        return http.no_content()

    @app.post(TOPIC + "/partitions")
    def update_partitions(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        count = bodies.partition_count(app)
        ops().update_partitions(topic_of(domain, tenant, namespace, topic), count)
        return http.no_content()
