"""Produce: commit one entry (JSON messages, the SDK's binary entry, or an uploaded entry), or
several framed entries in order (the SDK's multi-entry requests)."""

from magnetar_core.api import bodies, http, request, views

engine = http.container_engine()
app = http.make_app(engine)


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/messages")
def produce(domain: str, tenant: str, namespace: str, topic: str):
    name = request.topic_of(domain, tenant, namespace, topic)
    epoch = request.epoch(app)
    scheme = bodies.hashing_scheme(app)
    kind = request.content_type(app)
    if kind == http.ENTRIES_CONTENT_TYPE:
        many = engine().produce_many.publish(
            name, request.raw_body(app), epoch=epoch, hashing_scheme=scheme
        )
        return http.ok(views.publish_many_result(many))
    if kind == http.ENTRY_CONTENT_TYPE:
        # ?deduplicate=true: checked whatever the policies say (Pulsar Functions' outputs)
        result = engine().producer.publish(
            name, request.raw_body(app), epoch=epoch, hashing_scheme=scheme,
            deduplicate=request.flag(app, "deduplicate"),
        )  # fmt: skip
    else:
        body = request.json_object(app)
        if "entryRef" in body:
            ref = request.field(body, "entryRef", str, "")
            result = engine().producer.publish(
                name, entry_ref=ref, epoch=epoch, hashing_scheme=scheme
            )
        else:
            producer = f"rest-{engine().runtime.new_id()[:12]}"
            entry = views.entry_from_json(body, engine().runtime.now_ms(), producer)
            result = engine().producer.publish(name, entry, epoch=epoch, hashing_scheme=scheme)
    return http.ok(views.publish_result(result))


@app.post("/v1/<domain>/<tenant>/<namespace>/<topic>/uploads")
def upload(domain: str, tenant: str, namespace: str, topic: str):
    name = request.topic_of(domain, tenant, namespace, topic)
    engine().topics.resolve(name, create=True)
    return http.ok(views.upload(engine().producer.new_upload(name, http.UPLOAD_EXPIRY_SECONDS)))


lambda_handler = http.lambda_handler(app)
