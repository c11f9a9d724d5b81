"""Producers: register (access modes, epochs, last sequence id, the declared schema),
heartbeat, release."""

from magnetar_core.api import http, limits, request, views

engine = http.container_engine()
app = http.make_app(engine)


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/producers")
def register(domain: str, tenant: str, namespace: str, topic: str):
    body = request.json_object(app)
    name = request.topic_of(domain, tenant, namespace, topic)
    schema = body.get("schema")
    engine().schemas.declare(name, schema, producer=True, dry_run=True)  # refused: no producer
    registration = engine().access.register(
        name,
        request.field(body, "producerName", str, None, limits.MAX_PRODUCER_NAME_BYTES),
        request.field(body, "accessMode", str, "Shared"),
        request.field(body, "waitMs", int, 0),
        role=http.caller_role(app),
    )
    version = engine().schemas.declare(name, schema, producer=True) if schema else None
    return http.ok({**views.registration(registration), "schemaVersion": version})


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/producers/<producer_name>/heartbeat")
def heartbeat(domain: str, tenant: str, namespace: str, topic: str, producer_name: str):
    name = request.topic_of(domain, tenant, namespace, topic)
    epoch = engine().access.heartbeat(
        name, producer_name, request.epoch(app, required=True), http.caller_role(app)
    )
    return http.ok({"epoch": epoch})


@app.delete("/v1/<domain>/<tenant>/<namespace>/<topic>/producers/<producer_name>")
def release(domain: str, tenant: str, namespace: str, topic: str, producer_name: str):
    name = request.topic_of(domain, tenant, namespace, topic)
    released = engine().access.release(
        name, producer_name, request.epoch(app), http.caller_role(app)
    )
    return http.ok({"released": released})


lambda_handler = http.lambda_handler(app)
