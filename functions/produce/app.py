"""Produce: commit one entry (JSON messages or the SDK's binary entry) to a topic."""

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from magnetar_core.api import http, views

logger = Logger(service="magnetar")
app = http.make_app()
engine = http.engine_from_env()


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/messages")
def produce(domain: str, tenant: str, namespace: str, topic: str):
    name = http.topic_of(domain, tenant, namespace, topic)
    if http.content_type(app) == http.ENTRY_CONTENT_TYPE:
        entry = http.raw_body(app)
    else:
        entry = views.entry_from_json(
            http.json_object(app), engine.runtime.now_ms(), "rest-producer"
        )
    return http.ok(views.publish_result(engine.producer.publish(name, entry)))


@logger.inject_lambda_context
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return app.resolve(event, context)
