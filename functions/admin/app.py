"""Admin: Pulsar's /admin/v2 paths for topics, partitions, stats, subscriptions, policies
and triggers, and /admin/v3/functions (Pulsar Functions). The subscription verbs (skip,
expire, reset cursor, create) are ``magnetar_core.api.cursor_routes``, the topic verbs
(terminate, unload, truncate, grow partitions) ``magnetar_core.api.topic_routes``; the schema
registry and schema policies ``magnetar_core.api.schema_routes``; backlog quotas and rate
limits ``magnetar_core.api.quota_routes``; Pulsar Functions (their counters and state
too) ``magnetar_core.api.function_routes``."""

from magnetar_core.api import (
    bodies,
    cursor_routes,
    function_routes,
    http,
    quota_routes,
    request,
    schema_routes,
    topic_routes,
    views,
)

engine = http.container_engine()
app = http.make_app(engine)
topic_of = request.topic_of
cursor_routes.register(app, engine)
topic_routes.register(app, engine)
schema_routes.register(app, engine)
quota_routes.register(app, engine)
function_routes.register(app, engine)


@app.get("/admin/v2/brokers/health")
def health():
    return http.plain_text("ok")


@app.post("/admin/v2/namespaces/<tenant>/<namespace>/deduplication")
def set_namespace_deduplication(tenant: str, namespace: str):
    engine().namespaces.set_deduplication(tenant, namespace, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/namespaces/<tenant>/<namespace>/deduplication")
def get_namespace_deduplication(tenant: str, namespace: str):
    return http.ok(bool(engine().namespaces.get(tenant, namespace).deduplication))


@app.delete("/admin/v2/namespaces/<tenant>/<namespace>/deduplication")
def remove_namespace_deduplication(tenant: str, namespace: str):
    engine().namespaces.remove_deduplication(tenant, namespace)
    return http.no_content()


@app.post("/admin/v2/namespaces/<tenant>/<namespace>/maxMessageSize")
def set_max_message_size(tenant: str, namespace: str):
    engine().namespaces.set_max_message_size(tenant, namespace, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/namespaces/<tenant>/<namespace>/maxMessageSize")
def get_max_message_size(tenant: str, namespace: str):
    return http.ok(engine().namespaces.max_message_size(tenant, namespace))


@app.post("/admin/v2/namespaces/<tenant>/<namespace>/delayedDelivery")
def set_delayed_delivery(tenant: str, namespace: str):
    engine().namespaces.set_delayed_delivery(tenant, namespace, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/namespaces/<tenant>/<namespace>/delayedDelivery")
def get_delayed_delivery(tenant: str, namespace: str):
    return http.ok(engine().namespaces.delayed_delivery(tenant, namespace).to_body())


@app.delete("/admin/v2/namespaces/<tenant>/<namespace>/delayedDelivery")
def remove_delayed_delivery(tenant: str, namespace: str):
    engine().namespaces.remove_delayed_delivery(tenant, namespace)
    return http.no_content()


@app.post("/admin/v2/namespaces/<tenant>/<namespace>/retention")
def set_namespace_retention(tenant: str, namespace: str):
    engine().namespaces.set_retention(tenant, namespace, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/namespaces/<tenant>/<namespace>/retention")
def get_namespace_retention(tenant: str, namespace: str):
    return http.ok(engine().namespaces.retention(tenant, namespace).to_body())


@app.delete("/admin/v2/namespaces/<tenant>/<namespace>/retention")
def remove_namespace_retention(tenant: str, namespace: str):
    engine().namespaces.remove_retention(tenant, namespace)
    return http.no_content()


@app.post("/admin/v2/namespaces/<tenant>/<namespace>/messageTTL")
def set_namespace_message_ttl(tenant: str, namespace: str):
    engine().namespaces.set_message_ttl(tenant, namespace, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/namespaces/<tenant>/<namespace>/messageTTL")
def get_namespace_message_ttl(tenant: str, namespace: str):
    return http.ok(engine().namespaces.message_ttl(tenant, namespace))


@app.delete("/admin/v2/namespaces/<tenant>/<namespace>/messageTTL")
def remove_namespace_message_ttl(tenant: str, namespace: str):
    engine().namespaces.remove_message_ttl(tenant, namespace)
    return http.no_content()


@app.post("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/retention")
def set_topic_retention(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    engine().namespaces.set_topic_retention(name, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/retention")
def get_topic_retention(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    retention = engine().namespaces.topic_retention(name, applied=request.flag(app, "applied"))
    return http.no_content() if retention is None else http.ok(retention.to_body())


@app.delete("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/retention")
def remove_topic_retention(domain: str, tenant: str, namespace: str, topic: str):
    engine().namespaces.remove_topic_retention(topic_of(domain, tenant, namespace, topic))
    return http.no_content()


@app.post("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/messageTTL")
def set_topic_message_ttl(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    seconds = request.int_query(app, "messageTTL")  # Pulsar's form; a JSON body works too
    if seconds is None:
        seconds = request.json_body(app)
    engine().namespaces.set_topic_message_ttl(name, seconds)
    return http.no_content()


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/messageTTL")
def get_topic_message_ttl(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    seconds = engine().namespaces.topic_message_ttl(name, applied=request.flag(app, "applied"))
    return http.no_content() if seconds is None else http.ok(seconds)


@app.delete("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/messageTTL")
def remove_topic_message_ttl(domain: str, tenant: str, namespace: str, topic: str):
    engine().namespaces.remove_topic_message_ttl(topic_of(domain, tenant, namespace, topic))
    return http.no_content()


@app.post("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/deduplicationEnabled")
def set_topic_deduplication(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    engine().namespaces.set_topic_deduplication(name, request.json_body(app))
    return http.no_content()


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/deduplicationEnabled")
def get_topic_deduplication(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    engine().topics.get(name)
    return http.ok(engine().namespaces.effective(name, fresh=True).deduplication)


@app.put("/admin/v2/<domain>/<tenant>/<namespace>/<topic>")
def create_topic(domain: str, tenant: str, namespace: str, topic: str):
    engine().admin.create_topic(topic_of(domain, tenant, namespace, topic), None)
    return http.no_content()


@app.put("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/partitions")
def create_partitioned_topic(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    engine().admin.create_topic(name, bodies.partition_count(app))
    return http.no_content()


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/partitions")
def get_partitions(domain: str, tenant: str, namespace: str, topic: str):
    return http.ok(engine().admin.partitions(topic_of(domain, tenant, namespace, topic)))


@app.get("/admin/v2/<domain>/<tenant>/<namespace>")
def list_topics(domain: str, tenant: str, namespace: str):
    return http.ok(
        engine().admin.list_topics(topic_of(domain, tenant, namespace, "x"), partitioned_only=False)
    )


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/partitioned")
def list_partitioned_topics(domain: str, tenant: str, namespace: str):
    return http.ok(
        engine().admin.list_topics(topic_of(domain, tenant, namespace, "x"), partitioned_only=True)
    )


@app.delete("/admin/v2/<domain>/<tenant>/<namespace>/<topic>")
def delete_topic(domain: str, tenant: str, namespace: str, topic: str):
    engine().admin.delete_topic(
        topic_of(domain, tenant, namespace, topic), False, request.flag(app, "force")
    )
    return http.no_content()


@app.delete("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/partitions")
def delete_partitioned_topic(domain: str, tenant: str, namespace: str, topic: str):
    engine().admin.delete_topic(
        topic_of(domain, tenant, namespace, topic), True, request.flag(app, "force")
    )
    return http.no_content()


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/stats")
def stats(domain: str, tenant: str, namespace: str, topic: str):
    return http.ok(
        engine().admin.stats(topic_of(domain, tenant, namespace, topic), partitioned=False)
    )


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/partitioned-stats")
def partitioned_stats(domain: str, tenant: str, namespace: str, topic: str):
    per_partition = request.choice_query(app, "perPartition", ("true", "false"), "true") == "true"
    summed = engine().admin.stats(topic_of(domain, tenant, namespace, topic), partitioned=True)
    return http.ok(views.partitioned_stats(summed, per_partition))


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/lastMessageId")
def last_message_id(domain: str, tenant: str, namespace: str, topic: str):
    name = topic_of(domain, tenant, namespace, topic)
    last, terminated = engine().subscriptions.last_message(name)
    return http.ok({**views.last_message_id(last), "terminated": terminated})


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/subscriptions")
def subscriptions(domain: str, tenant: str, namespace: str, topic: str):
    return http.ok(engine().admin.subscriptions(topic_of(domain, tenant, namespace, topic)))


@app.delete("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/subscription/<subscription>")
def delete_subscription(domain: str, tenant: str, namespace: str, topic: str, subscription: str):
    name = topic_of(domain, tenant, namespace, topic)
    engine().admin.delete_subscription(name, subscription, request.flag(app, "force"))
    return http.no_content()


@app.put("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/compaction")
def trigger_compaction(domain: str, tenant: str, namespace: str, topic: str):
    engine().compaction.trigger(topic_of(domain, tenant, namespace, topic))
    return http.no_content()


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/compaction")
def compaction_status(domain: str, tenant: str, namespace: str, topic: str):
    return http.ok(engine().compaction.status(topic_of(domain, tenant, namespace, topic)))


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/triggers")
def list_triggers(domain: str, tenant: str, namespace: str, topic: str):
    return http.ok(engine().triggers.names(topic_of(domain, tenant, namespace, topic)))


@app.put("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/triggers/<name>")
def put_trigger(domain: str, tenant: str, namespace: str, topic: str, name: str):
    name_of = topic_of(domain, tenant, namespace, topic)
    precondition = bodies.precondition(app)
    trigger, _created = engine().triggers.put(name_of, name, request.json_body(app), precondition)
    return http.ok(trigger.to_body())


@app.get("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/triggers/<name>")
def get_trigger(domain: str, tenant: str, namespace: str, topic: str, name: str):
    name_of = topic_of(domain, tenant, namespace, topic)
    return http.ok(engine().triggers.get(name_of, name).to_body())


@app.delete("/admin/v2/<domain>/<tenant>/<namespace>/<topic>/triggers/<name>")
def delete_trigger(domain: str, tenant: str, namespace: str, topic: str, name: str):
    engine().triggers.delete(topic_of(domain, tenant, namespace, topic), name)
    return http.no_content()


lambda_handler = http.lambda_handler(app)
