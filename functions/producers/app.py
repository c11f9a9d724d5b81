"""Producers: register (access modes, epochs, last sequence id), heartbeat, release."""

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from magnetar_core.api import http, views

logger = Logger(service="magnetar")
app = http.make_app()
engine = http.engine_from_env()


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/producers")
def register(domain: str, tenant: str, namespace: str, topic: str):
    body = http.json_object(app)
    registration = engine.access.register(
        http.topic_of(domain, tenant, namespace, topic),
        http.field(body, "producerName", str, None),
        http.field(body, "accessMode", str, "Shared"),
        http.field(body, "waitMs", int, 0),
    )
    return http.ok(views.registration(registration))


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/producers/<producer_name>/heartbeat")
def heartbeat(domain: str, tenant: str, namespace: str, topic: str, producer_name: str):
    name = http.topic_of(domain, tenant, namespace, topic)
    epoch = engine.access.heartbeat(
        name, producer_name, http.int_query(app, "epoch", required=True)
    )
    return http.ok({"epoch": epoch})


@app.delete("/v1/<domain>/<tenant>/<namespace>/<topic>/producers/<producer_name>")
def release(domain: str, tenant: str, namespace: str, topic: str, producer_name: str):
    name = http.topic_of(domain, tenant, namespace, topic)
    released = engine.access.release(name, producer_name, http.int_query(app, "epoch"))
    return http.ok({"released": released})


@logger.inject_lambda_context
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
