"""The admin function's schema routes: Pulsar's ``SchemasResource`` paths
(``/admin/v2/schemas/{tenant}/{namespace}/{topic}/...``: schema, schema/{version},
schemas, compatibility, version) and the namespace's schema policies
(``schemaCompatibilityStrategy``, ``isAllowAutoUpdateSchema``,
``schemaValidationEnforced``). Registered on the admin app by ``register``; bodies and
answers are Pulsar's (``services.schemas`` says which errors)."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from magnetar_core.api import bodies, http, request
from magnetar_core.engine import Engine
from magnetar_wire.names import TopicName

SCHEMAS = "/admin/v2/schemas/<tenant>/<namespace>/<topic>"
NAMESPACE = "/admin/v2/namespaces/<tenant>/<namespace>"


def _topic(tenant: str, namespace: str, topic: str) -> TopicName:
    return request.topic_of("persistent", tenant, namespace, topic)


def register(app: APIGatewayHttpResolver, engine: Callable[[], Engine]) -> None:  # noqa: C901
    """Add the schema routes to ``app``, served by ``engine()``'s schemas."""

    @app.get(SCHEMAS + "/schema")
    def get_schema(tenant: str, namespace: str, topic: str) -> Response:
        return http.ok(engine().schemas.latest(_topic(tenant, namespace, topic)).to_body())

    @app.get(SCHEMAS + "/schema/<version>")
    def get_schema_version(tenant: str, namespace: str, topic: str, version: str) -> Response:
        number = bodies.path_int(version, "version")
        return http.ok(engine().schemas.get(_topic(tenant, namespace, topic), number).to_body())

    @app.get(SCHEMAS + "/schemas")
    def get_all_schemas(tenant: str, namespace: str, topic: str) -> Response:
        versions = engine().schemas.all(_topic(tenant, namespace, topic))
        return http.ok({"getSchemaResponses": [v.to_body() for v in versions]})

    @app.post(SCHEMAS + "/schema")
    def post_schema(tenant: str, namespace: str, topic: str) -> Response:
        version = engine().schemas.post(_topic(tenant, namespace, topic), request.json_body(app))
        return http.ok({"version": {"version": version}})

    @app.delete(SCHEMAS + "/schema")
    def delete_schema(tenant: str, namespace: str, topic: str) -> Response:
        return http.ok({"version": engine().schemas.delete(_topic(tenant, namespace, topic))})

    @app.post(SCHEMAS + "/compatibility")
    def test_compatibility(tenant: str, namespace: str, topic: str) -> Response:
        body = request.json_body(app)
        compatible, strategy = engine().schemas.test(_topic(tenant, namespace, topic), body)
        return http.ok({"compatibility": compatible, "schemaCompatibilityStrategy": strategy})

    @app.post(SCHEMAS + "/version")
    def version_of(tenant: str, namespace: str, topic: str) -> Response:
        body = request.json_body(app)
        return http.ok({"version": engine().schemas.version_of(_topic(tenant, namespace, topic), body)})  # fmt: skip

    @app.get(NAMESPACE + "/schemaCompatibilityStrategy")
    def get_strategy(tenant: str, namespace: str) -> Response:
        return http.ok(engine().schema_policies.strategy(tenant, namespace))

    @app.put(NAMESPACE + "/schemaCompatibilityStrategy")
    def set_strategy(tenant: str, namespace: str) -> Response:
        engine().schema_policies.set_strategy(tenant, namespace, request.json_body(app))
        return http.no_content()

    @app.get(NAMESPACE + "/isAllowAutoUpdateSchema")
    def get_auto_update(tenant: str, namespace: str) -> Response:
        return http.ok(engine().schema_policies.auto_update(tenant, namespace))

    @app.post(NAMESPACE + "/isAllowAutoUpdateSchema")
    def set_auto_update(tenant: str, namespace: str) -> Response:
        engine().schema_policies.set_auto_update(tenant, namespace, request.json_body(app))
        return http.no_content()

    @app.get(NAMESPACE + "/schemaValidationEnforced")
    def get_validation(tenant: str, namespace: str) -> Response:
        return http.ok(engine().schema_policies.validation_enforced(tenant, namespace))

    @app.post(NAMESPACE + "/schemaValidationEnforced")
    def set_validation(tenant: str, namespace: str) -> Response:
        engine().schema_policies.set_validation_enforced(tenant, namespace, request.json_body(app))
        return http.no_content()
