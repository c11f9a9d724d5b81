"""Consumers: subscribe (register a consumer), close a consumer, unsubscribe."""

from magnetar_core.api import bodies, http, request, views

engine = http.container_engine()
app = http.make_app(engine)


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers")
def subscribe(domain: str, tenant: str, namespace: str, topic: str, subscription: str):
    body = request.json_object(app)
    position = request.field(body, "initialPosition", str, "Latest")
    if position not in ("Latest", "Earliest"):
        return http.error_response(
            "InvalidMessage", "initialPosition must be Latest or Earliest", 400
        )
    name = request.topic_of(domain, tenant, namespace, topic)
    schema = body.get("schema")
    engine().schemas.declare(name, schema, producer=False, dry_run=True)  # refused: no consumer
    handle = engine().subscriptions.subscribe(
        name,
        subscription,
        request.field(body, "consumerName", str, None),
        request.field(body, "subscriptionType", str, "Exclusive"),
        earliest=position == "Earliest",
        priority_level=request.field(body, "priorityLevel", int, 0),
        spread=request.field(body, "multiTopic", bool, False),
        start_message_id=request.field(body, "startMessageId", str, None),
        inclusive=request.field(body, "startMessageIdInclusive", bool, False),
        durable=request.field(body, "durable", bool, True),
        key_shared=bodies.key_shared_options(body),
        dead_letter=bodies.dead_letter_policy(body),
        read_compacted=request.field(body, "readCompacted", bool, False),
        role=http.caller_role(app),
    )
    version = engine().schemas.declare(name, schema, producer=False) if schema else None
    answer = {**views.consumer_handle(handle), "schemaVersion": version}
    if engine().notify.url and name.persistent:  # the channel idle consumers wait on
        answer["notifyUrl"] = engine().notify.url
    return http.ok(answer)


@app.delete(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>"
)
def close(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    name = request.topic_of(domain, tenant, namespace, topic)
    engine().subscriptions.close(name, subscription, consumer_id, http.caller_role(app))
    return http.ok({"closed": True})


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/unsubscribe"
)
def unsubscribe(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    name = request.topic_of(domain, tenant, namespace, topic)
    engine().subscriptions.unsubscribe(name, subscription, consumer_id, http.caller_role(app))
    return http.ok({"unsubscribed": True})


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/heartbeat"
)
def heartbeat(
    domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str
):
    name = request.topic_of(domain, tenant, namespace, topic)
    engine().subscriptions.heartbeat(name, subscription, consumer_id, http.caller_role(app))
    return http.ok({"alive": True})


@app.post(
    "/v1/<domain>/<tenant>/<namespace>/<topic>/subscriptions/<subscription>/consumers/<consumer_id>/seek"
)
def seek(domain: str, tenant: str, namespace: str, topic: str, subscription: str, consumer_id: str):
    body = request.json_object(app)
    name = request.topic_of(domain, tenant, namespace, topic)
    engine().subscriptions.seek(
        name,
        subscription,
        consumer_id,
        message_id=request.field(body, "messageId", str, None),
        timestamp_ms=request.field(body, "timestamp", int, None),
        inclusive=request.field(body, "inclusive", bool, False),
        role=http.caller_role(app),
    )
    return http.ok({"seeked": True})


lambda_handler = http.lambda_handler(app)
