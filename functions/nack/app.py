"""Negative acknowledge and redeliver-unacknowledged: entries go back for redelivery, at once
or after a server-side delay (``delayMs``, or ``backoff`` by redelivery count)."""

from magnetar_core.api import bodies, http, request

engine = http.container_engine()
app = http.make_app(engine)


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/nack"
)
def negative_acknowledge(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    body = request.json_object(app)
    ids = request.field(body, "messageIds", list, [])
    delay_ms = request.field(body, "delayMs", int, 0)
    backoff = bodies.nack_backoff(body)
    counts = request.field(body, "redeliveryCounts", dict, None)
    name = request.topic_of(domain, tenant, namespace, topic)
    moved = engine().subscriptions.negative_acknowledge(
        name, subscription, consumer_id, ids, delay_ms, backoff, counts, http.caller_role(app)
    )
    return http.ok({"redelivered": moved})


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/redeliver"
)
def redeliver(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    name = request.topic_of(domain, tenant, namespace, topic)
    moved = engine().subscriptions.redeliver_unacknowledged(
        name, subscription, consumer_id, http.caller_role(app)
    )
    return http.ok({"redelivered": moved})


lambda_handler = http.lambda_handler(app)
