"""The admin function's backlog quotas and rate limits (issue 14), on namespaces
(``/admin/v2/namespaces/{tenant}/{namespace}/...``) and topics
(``/admin/v2/{domain}/{tenant}/{namespace}/{topic}/...``), Pulsar's paths and bodies:
``GET backlogQuotaMap``, ``POST``/``DELETE backlogQuota?backlogQuotaType=``, and ``GET``/
``POST``/``DELETE`` of ``publishRate``, ``dispatchRate``, ``subscriptionDispatchRate``,
``subscribeRate``. A GET of a rate that is not set answers 204; topic GETs take
``?applied=true`` (the namespace's where the topic sets none). Errors: 400 InvalidMessage
(bad body or type), 404 (unknown namespace or topic), 412 PreconditionFailed (a backlog
quota reaching the retention); nothing changes when they answer one."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from magnetar_core.api import http, request
from magnetar_core.engine import Engine
from magnetar_core.services.quotas import Quotas
from magnetar_wire.names import TopicName

NAMESPACE = "/admin/v2/namespaces/<tenant>/<namespace>"
TOPIC = "/admin/v2/<domain>/<tenant>/<namespace>/<topic>"
RATES = {
    "publishRate": "publish_rate",
    "dispatchRate": "dispatch_rate",
    "subscriptionDispatchRate": "subscription_dispatch_rate",
    "subscribeRate": "subscribe_rate",
}
"""Pulsar's path segment of each rate -> its QuotaPolicies field."""


def _rate_body(rate: object) -> Response:
    return http.no_content() if rate is None else http.ok(rate.to_body())  # type: ignore[attr-defined]


def register(app: APIGatewayHttpResolver, engine: Callable[[], Engine]) -> None:
    """Add the quota and rate routes to ``app``, served by ``engine()``'s quotas."""

    def quotas() -> Quotas:
        return engine().quotas

    def quota_type() -> str | None:
        return app.current_event.get_query_string_value("backlogQuotaType")

    @app.get(NAMESPACE + "/backlogQuotaMap")
    def get_namespace_backlog_quotas(tenant: str, namespace: str) -> Response:
        return http.ok(quotas().namespace(tenant, namespace).backlog_map())

    @app.post(NAMESPACE + "/backlogQuota")
    def set_namespace_backlog_quota(tenant: str, namespace: str) -> Response:
        body = request.json_body(app)
        quotas().set_namespace_backlog_quota(tenant, namespace, quota_type(), body)
        return http.no_content()

    @app.delete(NAMESPACE + "/backlogQuota")
    def remove_namespace_backlog_quota(tenant: str, namespace: str) -> Response:
        quotas().remove_namespace_backlog_quota(tenant, namespace, quota_type())
        return http.no_content()

    def topic_name(domain: str, tenant: str, namespace: str, topic: str) -> TopicName:
        return request.topic_of(domain, tenant, namespace, topic)

    @app.get(TOPIC + "/backlogQuotaMap")
    def get_topic_backlog_quotas(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        name = topic_name(domain, tenant, namespace, topic)
        return http.ok(quotas().topic(name, request.flag(app, "applied")).backlog_map())

    @app.post(TOPIC + "/backlogQuota")
    def set_topic_backlog_quota(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        name, body = topic_name(domain, tenant, namespace, topic), request.json_body(app)
        quotas().set_topic_backlog_quota(name, quota_type(), body)
        return http.no_content()

    @app.delete(TOPIC + "/backlogQuota")
    def remove_topic_backlog_quota(domain: str, tenant: str, namespace: str, topic: str) -> Response:  # fmt: skip
        quotas().remove_topic_backlog_quota(
            topic_name(domain, tenant, namespace, topic), quota_type()
        )
        return http.no_content()

    for segment, kind in RATES.items():
        _register_rate(app, quotas, segment, kind)


def _register_rate(
    app: APIGatewayHttpResolver, quotas: Callable[[], Quotas], segment: str, kind: str
) -> None:
    """GET/POST/DELETE of one rate on namespaces and topics."""

    @app.get(f"{NAMESPACE}/{segment}")
    def get_namespace_rate(tenant: str, namespace: str) -> Response:
        return _rate_body(quotas().namespace_rate(tenant, namespace, kind))

    @app.post(f"{NAMESPACE}/{segment}")
    def set_namespace_rate(tenant: str, namespace: str) -> Response:
        quotas().set_namespace_rate(tenant, namespace, kind, request.json_body(app))
        return http.no_content()

    @app.delete(f"{NAMESPACE}/{segment}")
    def remove_namespace_rate(tenant: str, namespace: str) -> Response:
        quotas().remove_namespace_rate(tenant, namespace, kind)
        return http.no_content()

    @app.get(f"{TOPIC}/{segment}")
    def get_topic_rate(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        name = request.topic_of(domain, tenant, namespace, topic)
        return _rate_body(quotas().topic_rate(name, kind, request.flag(app, "applied")))

    @app.post(f"{TOPIC}/{segment}")
    def set_topic_rate(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        name = request.topic_of(domain, tenant, namespace, topic)
        quotas().set_topic_rate(name, kind, request.json_body(app))
        return http.no_content()

    @app.delete(f"{TOPIC}/{segment}")
    def remove_topic_rate(domain: str, tenant: str, namespace: str, topic: str) -> Response:
        quotas().remove_topic_rate(request.topic_of(domain, tenant, namespace, topic), kind)
        return http.no_content()
