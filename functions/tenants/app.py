"""Tenancy: Pulsar's /admin/v2 paths for clusters, tenants, namespaces and permissions."""

from magnetar_core.api import http, request

engine = http.container_engine()
app = http.make_app(engine)
_NS = "/admin/v2/namespaces/<tenant>/<namespace>"
_TOPIC = "/admin/v2/<domain>/<tenant>/<namespace>/<topic>"


@app.get("/admin/v2/clusters")
def list_clusters():
    return http.ok(engine().tenants.clusters())


@app.get("/admin/v2/tenants")
def list_tenants():
    return http.ok(engine().tenants.names())


@app.get("/admin/v2/tenants/<tenant>")
def get_tenant(tenant: str):
    return http.ok(engine().tenants.get(tenant))


@app.put("/admin/v2/tenants/<tenant>")
def create_tenant(tenant: str):
    engine().tenants.create(tenant, request.json_body(app))
    return http.no_content()


@app.post("/admin/v2/tenants/<tenant>")
def update_tenant(tenant: str):
    engine().tenants.update(tenant, request.json_body(app))
    return http.no_content()


@app.delete("/admin/v2/tenants/<tenant>")
def delete_tenant(tenant: str):
    engine().tenants.delete(tenant, request.flag(app, "force"))
    return http.no_content()


@app.get("/admin/v2/namespaces/<tenant>")
def list_namespaces(tenant: str):
    return http.ok(engine().namespace_admin.names(tenant))


@app.get(_NS)
def get_namespace(tenant: str, namespace: str):
    return http.ok(engine().namespace_admin.policies(tenant, namespace))


@app.put(_NS)
def create_namespace(tenant: str, namespace: str):
    engine().namespace_admin.create(tenant, namespace, request.json_body(app))
    return http.no_content()


@app.delete(_NS)
def delete_namespace(tenant: str, namespace: str):
    engine().namespace_admin.delete(tenant, namespace, request.flag(app, "force"))
    return http.no_content()


@app.get(_NS + "/topics")
def namespace_topics(tenant: str, namespace: str):
    mode = request.choice_query(app, "mode", ("PERSISTENT", "NON_PERSISTENT", "ALL"), "PERSISTENT")
    return http.ok(engine().namespace_admin.topics(tenant, namespace, mode))


@app.get(_NS + "/permissions")
def namespace_permissions(tenant: str, namespace: str):
    return http.ok(engine().permissions.namespace(tenant, namespace))


@app.post(_NS + "/permissions/<role>")
def grant_namespace_permission(tenant: str, namespace: str, role: str):
    engine().permissions.grant(tenant, namespace, role, request.json_body(app))
    return http.no_content()


@app.delete(_NS + "/permissions/<role>")
def revoke_namespace_permission(tenant: str, namespace: str, role: str):
    engine().permissions.revoke(tenant, namespace, role)
    return http.no_content()


@app.get(_NS + "/permissions/subscription")
def subscription_permissions(tenant: str, namespace: str):
    return http.ok(engine().permissions.subscriptions(tenant, namespace))


@app.post(_NS + "/permissions/subscription/<subscription>")
def grant_subscription_permission(tenant: str, namespace: str, subscription: str):
    body = request.json_body(app)
    engine().permissions.grant_subscription(tenant, namespace, subscription, body)
    return http.no_content()


@app.delete(_NS + "/permissions/<subscription>/<role>")
def revoke_subscription_permission(tenant: str, namespace: str, subscription: str, role: str):
    engine().permissions.revoke_subscription(tenant, namespace, subscription, role)
    return http.no_content()


@app.get(_TOPIC + "/permissions")
def topic_permissions(domain: str, tenant: str, namespace: str, topic: str):
    return http.ok(engine().permissions.topic(request.topic_of(domain, tenant, namespace, topic)))


@app.post(_TOPIC + "/permissions/<role>")
def grant_topic_permission(domain: str, tenant: str, namespace: str, topic: str, role: str):
    name = request.topic_of(domain, tenant, namespace, topic)
    engine().permissions.grant_topic(name, role, request.json_body(app))
    return http.no_content()


@app.delete(_TOPIC + "/permissions/<role>")
def revoke_topic_permission(domain: str, tenant: str, namespace: str, topic: str, role: str):
    engine().permissions.revoke_topic(request.topic_of(domain, tenant, namespace, topic), role)
    return http.no_content()


lambda_handler = http.lambda_handler(app)
