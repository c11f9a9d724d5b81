"""Negative acknowledge and redeliver-unacknowledged: entries go back for redelivery."""

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from magnetar_core.api import http

logger = Logger(service="magnetar")
app = http.make_app()
engine = http.engine_from_env()


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/nack"
)
def negative_acknowledge(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    ids = http.field(http.json_object(app), "messageIds", list, [])
    name = http.topic_of(domain, tenant, namespace, topic)
    moved = engine.subscriptions.negative_acknowledge(name, subscription, consumer_id, ids)
    return http.ok({"redelivered": moved})


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/redeliver"
)
def redeliver(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    name = http.topic_of(domain, tenant, namespace, topic)
    moved = engine.subscriptions.redeliver_unacknowledged(name, subscription, consumer_id)
    return http.ok({"redelivered": moved})


@logger.inject_lambda_context
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
