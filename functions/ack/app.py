"""Acknowledge: individual, batch-index and cumulative acks of one consumer."""

from magnetar_core.api import http, request

engine = http.container_engine()
app = http.make_app(engine)


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/ack"
)
def acknowledge(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    body = request.json_object(app)
    done = engine().subscriptions.acknowledge(
        request.topic_of(domain, tenant, namespace, topic),
        subscription,
        consumer_id,
        request.field(body, "messageIds", list, []),
        cumulative=request.field(body, "cumulative", bool, False),
        role=http.caller_role(app),
    )
    return http.ok({"acknowledged": done})


lambda_handler = http.lambda_handler(app)
