"""Acknowledge: individual, batch-index and cumulative acks of one consumer."""

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from magnetar_core.api import http

logger = Logger(service="magnetar")
app = http.make_app()
engine = http.engine_from_env()


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/ack"
)
def acknowledge(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    body = http.json_object(app)
    done = engine.subscriptions.acknowledge(
        http.topic_of(domain, tenant, namespace, topic),
        subscription,
        consumer_id,
        http.field(body, "messageIds", list, []),
        cumulative=http.field(body, "cumulative", bool, False),
    )
    return http.ok({"acknowledged": done})


@logger.inject_lambda_context
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
