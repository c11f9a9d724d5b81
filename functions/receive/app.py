"""Receive: long-poll for messages to dispatch to one consumer."""

from magnetar_core.api import http, request, views

engine = http.container_engine()
app = http.make_app(engine)


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/receive"
)
def receive(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    body = request.json_object(app)
    shape = request.field(body, "format", str, "json")
    if shape not in ("json", "entry"):
        return http.error_response("InvalidMessage", "format must be json or entry", 400)
    delivered = engine().subscriptions.receive(
        request.topic_of(domain, tenant, namespace, topic),
        subscription,
        consumer_id,
        max_messages=request.field(body, "maxMessages", int, 100),
        wait_ms=request.field(body, "waitMs", int, 0),
        by_reference=shape == "entry",
        role=http.caller_role(app),
    )
    return http.ok(views.entries(delivered) if shape == "entry" else views.messages(delivered))


lambda_handler = http.lambda_handler(app)
