"""Every HTTP route's route class, as data, and the requirement a request must meet.

``ROUTES`` maps ``(method, path template)`` — exactly as API Gateway names the route
(``template.yaml``) — to its ``RouteClass`` and what it does, in words for 403 messages.
Routes marked ``pending`` are classified before they are served (none today). A route that is
not in the table gets ``Unclassified``: denied to every role. ``tests/unit/
test_security_routes.py`` fails when template.yaml has a route this table lacks.

The classes follow Pulsar's ``PulsarAuthorizationProvider``: tenant, cluster and broker
administration is the superusers'; namespace administration, namespace and topic policies,
topic creation and deletion, compaction and permissions are the tenant admins'; data-path
routes need ``produce`` or ``consume``; metadata and stats need either; triggers need the
namespace's ``functions`` permission (as Pulsar Functions do).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from magnetar_core.domain.security.requirements import (
    AnyRole,
    Consume,
    Functions,
    ListTopics,
    Lookup,
    NamespaceConsume,
    NamespaceFunctions,
    Produce,
    Requirement,
    SuperuserOnly,
    TenantAdmin,
    Unclassified,
)
from magnetar_wire.names import TopicName, check_namespace


class RouteClass(Enum):
    """What a route needs; see the requirement of the same name."""

    SUPERUSER = "superuser"
    ANY_ROLE = "any role"
    TENANT_ADMIN = "tenant admin"
    LIST_TOPICS = "produce or consume on the namespace"
    NAMESPACE_CONSUME = "consume on the namespace"
    LOOKUP = "produce or consume"
    PRODUCE = "produce"
    CONSUME = "consume"
    CONSUME_SUBSCRIPTION = "consume, and the subscription's permission"
    FUNCTIONS = "functions on the namespace"
    NAMESPACE_FUNCTIONS = "functions on the namespace, for its Pulsar Functions"


@dataclass(frozen=True)
class Route:
    """A route's class and what it does (words after "to"; ``{tenant}``, ``{namespace}``,
    ``{topic}``... are filled from the path); ``pending``: not served yet."""

    route_class: RouteClass
    action: str
    pending: bool = False


_NS = "/admin/v2/namespaces/{tenant}/{namespace}"
_TOPIC = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}"
_V1 = "/v1/{domain}/{tenant}/{namespace}/{topic}"
_SUB = _TOPIC + "/subscription/{subscription}"
_FN = "/admin/v3/functions/{tenant}/{namespace}"
_CONSUMER = _V1 + "/subscriptions/{subscription}/consumers/{consumerId}"
_SCHEMAS = "/admin/v2/schemas/{tenant}/{namespace}/{topic}"
_VERBS = {"GET": "read", "POST": "set", "PUT": "set", "DELETE": "remove"}
S, A, T = RouteClass.SUPERUSER, RouteClass.ANY_ROLE, RouteClass.TENANT_ADMIN
NS, L, P = RouteClass.LIST_TOPICS, RouteClass.LOOKUP, RouteClass.PRODUCE
NC = RouteClass.NAMESPACE_CONSUME
C, CS = RouteClass.CONSUME, RouteClass.CONSUME_SUBSCRIPTION
F, NF = RouteClass.FUNCTIONS, RouteClass.NAMESPACE_FUNCTIONS


def _policy_rows(prefix: str, where: str, names: dict[str, str]) -> list[tuple[str, str, RouteClass, str]]:  # fmt: skip
    """Tenant-admin rows of policy routes: ``names`` maps a policy's path segment to its
    methods (``"GET POST DELETE"``)."""
    return [
        (method, f"{prefix}/{name}", T, f"{_VERBS[method]} the {name} policy of {where}")
        for name, methods in names.items()
        for method in methods.split()
    ]


_QUOTA_ROUTES = {
    "backlogQuotaMap": "GET", "backlogQuota": "POST DELETE", "publishRate": "GET POST DELETE",
    "dispatchRate": "GET POST DELETE", "subscriptionDispatchRate": "GET POST DELETE",
    "subscribeRate": "GET POST DELETE",
}  # fmt: skip
"""Backlog quotas and rates (issue 14): namespace and topic policies, tenant admin's."""

# fmt: off
_SERVED: list[tuple[str, str, RouteClass, str]] = [
    ("GET", "/admin/v2/brokers/health", S, "check the broker's health"),
    *_policy_rows(_NS, "namespace {tenant}/{namespace}", {
        "deduplication": "GET POST DELETE", "delayedDelivery": "GET POST DELETE",
        "maxMessageSize": "GET POST", "messageTTL": "GET POST DELETE",
        "retention": "GET POST DELETE", **_QUOTA_ROUTES,
    }),
    ("GET", "/admin/v2/{domain}/{tenant}/{namespace}", NS, ""),
    ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/partitioned", NS, ""),
    ("PUT", _TOPIC, T, "create topic {topic}"),
    ("DELETE", _TOPIC, T, "delete topic {topic}"),
    ("GET", _TOPIC + "/compaction", T, "read the compaction status of {topic}"),
    ("PUT", _TOPIC + "/compaction", T, "compact {topic}"),
    *_policy_rows(_TOPIC, "topic {topic}", {
        "deduplicationEnabled": "GET POST", "messageTTL": "GET POST DELETE",
        "retention": "GET POST DELETE", **_QUOTA_ROUTES,
    }),
    ("GET", _TOPIC + "/lastMessageId", C, ""),
    ("GET", _TOPIC + "/stats", L, ""),
    ("GET", _TOPIC + "/partitioned-stats", L, ""),
    ("GET", _TOPIC + "/partitions", L, ""),
    ("PUT", _TOPIC + "/partitions", T, "create partitioned topic {topic}"),
    ("POST", _TOPIC + "/partitions", T, "update the partitions of {topic}"),
    # topic verbs (issue 14): Pulsar's TERMINATE, UNLOAD and TRUNCATE are tenant admin's
    ("POST", _TOPIC + "/terminate", T, "terminate topic {topic}"),
    ("POST", _TOPIC + "/terminate/partitions", T, "terminate the partitions of {topic}"),
    ("PUT", _TOPIC + "/unload", T, "unload topic {topic}"),
    ("DELETE", _TOPIC + "/truncate", T, "truncate topic {topic}"),
    ("DELETE", _TOPIC + "/partitions", T, "delete partitioned topic {topic}"),
    ("GET", _TOPIC + "/subscriptions", C, ""),
    ("DELETE", _TOPIC + "/subscription/{subscription}", CS, ""),
    # subscription verbs (issue 14): Pulsar's SKIP, EXPIRE_MESSAGES, RESET_CURSOR, SUBSCRIBE
    ("PUT", _SUB, CS, ""),
    ("POST", _SUB + "/skip/{numMessages}", CS, ""),
    ("POST", _SUB + "/skip_all", CS, ""),
    ("POST", _SUB + "/expireMessages/{expireTimeInSeconds}", CS, ""),
    ("POST", _TOPIC + "/all_subscription/expireMessages/{expireTimeInSeconds}", C, ""),
    ("POST", _SUB + "/resetcursor/{timestamp}", CS, ""),
    ("POST", _SUB + "/resetcursor", CS, ""),
    # reads that consume nothing (issue 14): Pulsar's PEEK_MESSAGES, a consume operation
    ("GET", _SUB + "/position/{messagePosition}", CS, ""),
    ("GET", _TOPIC + "/examinemessage", C, ""),
    ("GET", _TOPIC + "/ledger/{ledgerId}/entry/{entryId}", C, ""),
    # triggers (issue 13): the namespace's functions permission, as Pulsar Functions
    ("GET", _TOPIC + "/triggers", F, "list the triggers of {topic}"),
    ("PUT", _TOPIC + "/triggers/{name}", F, "create or replace trigger {name} of {topic}"),
    ("GET", _TOPIC + "/triggers/{name}", F, "read trigger {name} of {topic}"),
    ("DELETE", _TOPIC + "/triggers/{name}", F, "delete trigger {name} of {topic}"),
    # Pulsar Functions (issue 13): the namespace's functions permission, as Pulsar
    ("GET", _FN, NF, "list the functions of namespace {tenant}/{namespace}"),
    ("POST", _FN + "/{name}", NF, "register function {tenant}/{namespace}/{name}"),
    ("PUT", _FN + "/{name}", NF, "create or replace function {tenant}/{namespace}/{name}"),
    ("GET", _FN + "/{name}", NF, "read function {tenant}/{namespace}/{name}"),
    ("DELETE", _FN + "/{name}", NF, "delete function {tenant}/{namespace}/{name}"),
    # a function's counters and state: what its runner calls with the function's role
    ("GET", _FN + "/{name}/state/{key}", NF, "read the state of function {tenant}/{namespace}/{name}"),
    ("POST", _FN + "/{name}/state/{key}", NF, "write the state of function {tenant}/{namespace}/{name}"),
    ("GET", _FN + "/{name}/counters/{key}", NF, "read the counters of function {tenant}/{namespace}/{name}"),
    ("POST", _FN + "/{name}/counters/{key}", NF, "change the counters of function {tenant}/{namespace}/{name}"),
    ("DELETE", _FN + "/{name}/counters/{key}", NF, "delete a counter of function {tenant}/{namespace}/{name}"),
    # pulsar-admin's functions status, stats, start, stop, restart, trigger
    ("GET", _FN + "/{name}/status", NF, "read the status of function {tenant}/{namespace}/{name}"),
    ("GET", _FN + "/{name}/stats", NF, "read the stats of function {tenant}/{namespace}/{name}"),
    ("POST", _FN + "/{name}/start", NF, "start function {tenant}/{namespace}/{name}"),
    ("POST", _FN + "/{name}/stop", NF, "stop function {tenant}/{namespace}/{name}"),
    ("POST", _FN + "/{name}/restart", NF, "restart function {tenant}/{namespace}/{name}"),
    ("POST", _FN + "/{name}/trigger", NF, "trigger function {tenant}/{namespace}/{name}"),
    # schema registry (issue 15), as Pulsar's SchemasResource: reads are GET_METADATA
    # (produce or consume), POST schema is PRODUCE, delete and compatibility tenant admin
    *_policy_rows(_NS, "namespace {tenant}/{namespace}", {
        "schemaCompatibilityStrategy": "GET PUT", "isAllowAutoUpdateSchema": "GET POST",
        "schemaValidationEnforced": "GET POST",
    }),
    ("GET", _SCHEMAS + "/schema", L, ""),
    ("GET", _SCHEMAS + "/schema/{version}", L, ""),
    ("GET", _SCHEMAS + "/schemas", L, ""),
    ("POST", _SCHEMAS + "/version", L, ""),
    ("POST", _SCHEMAS + "/schema", P, ""),
    ("DELETE", _SCHEMAS + "/schema", T, "delete the schema of {topic}"),
    ("POST", _SCHEMAS + "/compatibility", T, "test a schema's compatibility with {topic}"),
    ("POST", _V1 + "/messages", P, ""),
    ("POST", _V1 + "/uploads", P, ""),
    ("POST", _V1 + "/producers", P, ""),
    ("DELETE", _V1 + "/producers/{producerName}", P, ""),
    ("POST", _V1 + "/producers/{producerName}/heartbeat", P, ""),
    ("POST", _V1 + "/subscriptions/{subscription}/consumers", CS, ""),
    ("DELETE", _CONSUMER, CS, ""),
    *[("POST", f"{_CONSUMER}/{verb}", CS, "") for verb in (
        "ack", "nack", "redeliver", "receive", "heartbeat", "seek", "unsubscribe")],
    # tenancy (functions/tenants): clusters, tenants, namespaces, permissions
    ("GET", "/admin/v2/clusters", A, "list the clusters"),
    ("GET", "/admin/v2/tenants", S, "list the tenants"),
    ("GET", "/admin/v2/tenants/{tenant}", S, "read tenant {tenant}"),
    ("PUT", "/admin/v2/tenants/{tenant}", S, "create tenant {tenant}"),
    ("POST", "/admin/v2/tenants/{tenant}", S, "update tenant {tenant}"),
    ("DELETE", "/admin/v2/tenants/{tenant}", S, "delete tenant {tenant}"),
    ("GET", "/admin/v2/namespaces/{tenant}", T, "list the namespaces of tenant {tenant}"),
    ("GET", _NS, T, "read the policies of namespace {tenant}/{namespace}"),
    ("PUT", _NS, T, "create namespace {tenant}/{namespace}"),
    ("DELETE", _NS, T, "delete namespace {tenant}/{namespace}"),
    ("GET", _NS + "/topics", NS, ""),
    # a namespace's subscriptions (issue 14): Pulsar's CLEAR_BACKLOG and UNSUBSCRIBE
    ("POST", _NS + "/clearBacklog", NC, "clear the backlog of every subscription of namespace {tenant}/{namespace}"),
    ("POST", _NS + "/clearBacklog/{subscription}", NC, "clear the backlog of subscription {subscription} in namespace {tenant}/{namespace}"),
    ("POST", _NS + "/unsubscribe/{subscription}", NC, "unsubscribe {subscription} from the topics of namespace {tenant}/{namespace}"),
    ("GET", _NS + "/permissions", T, "read the permissions of namespace {tenant}/{namespace}"),
    ("POST", _NS + "/permissions/{role}", T, "grant permissions on namespace {tenant}/{namespace}"),
    ("DELETE", _NS + "/permissions/{role}", T, "revoke permissions on namespace {tenant}/{namespace}"),
    ("GET", _NS + "/permissions/subscription", T, "read the subscription permissions of namespace {tenant}/{namespace}"),
    ("POST", _NS + "/permissions/subscription/{subscription}", T, "grant permissions on subscription {subscription} of namespace {tenant}/{namespace}"),
    ("DELETE", _NS + "/permissions/{subscription}/{role}", T, "revoke permissions on subscription {subscription} of namespace {tenant}/{namespace}"),
    # the console's charts (issue 14): a topic's rates and backlog, as its stats
    ("GET", "/console/api/history/{domain}/{tenant}/{namespace}/{topic}", L, ""),
    ("GET", _TOPIC + "/permissions", T, "read the permissions of topic {topic}"),
    ("POST", _TOPIC + "/permissions/{role}", T, "grant permissions on topic {topic}"),
    ("DELETE", _TOPIC + "/permissions/{role}", T, "revoke permissions on topic {topic}"),
]
_PUBLIC: list[tuple[str, str]] = [("GET", "/console"), ("GET", "/console/{proxy+}")]
"""Routes API Gateway serves without the authorizer (template.yaml ``Authorizer: NONE``),
whose handler asks no role: the console's static files, which hold no data (what the page
shows it asks of the API with the caller's token)."""
_PENDING: list[tuple[str, str, RouteClass, str]] = []
"""Routes classified before they are served (none now: issue 12's tenancy routes are)."""
# fmt: on

ROUTES: dict[tuple[str, str], Route] = {
    **{(m, path): Route(c, action) for m, path, c, action in _SERVED},
    **{(m, path): Route(c, action, pending=True) for m, path, c, action in _PENDING},
}
"""Every route, by ``(method, path template)``."""
PUBLIC_ROUTES: frozenset[tuple[str, str]] = frozenset(_PUBLIC)
"""Routes that need no role at all (see ``_PUBLIC``); not in ``ROUTES``."""


def _topic(params: Mapping[str, str]) -> TopicName:
    # the schema routes' paths have no domain: Pulsar's schemas are persistent topics'
    domain = params.get("domain", "persistent")
    return TopicName.of(domain, params["tenant"], params["namespace"], params["topic"])


def _namespace(params: Mapping[str, str]) -> str | None:
    if "namespace" not in params:
        return None
    check_namespace(params["tenant"], params["namespace"])
    return f"{params['tenant']}/{params['namespace']}"


def _required_namespace(params: Mapping[str, str]) -> str:
    check_namespace(params["tenant"], params["namespace"])
    return f"{params['tenant']}/{params['namespace']}"


def _words(route: Route, params: Mapping[str, str]) -> str:
    if "topic" in params and "tenant" in params:
        params = {**params, "topic": str(_topic(params))}
    return route.action.format_map(params)


_FACTORIES: dict[RouteClass, Callable[[Route, Mapping[str, str]], Requirement]] = {
    S: lambda r, p: SuperuserOnly(_words(r, p), p.get("tenant"), _namespace(p)),
    A: lambda r, p: AnyRole(_words(r, p), p.get("tenant"), _namespace(p)),
    T: lambda r, p: TenantAdmin(p["tenant"], _words(r, p), _namespace(p)),
    NS: lambda r, p: ListTopics(p["tenant"], _required_namespace(p)),
    NC: lambda r, p: NamespaceConsume(p["tenant"], _required_namespace(p), _words(r, p)),
    L: lambda r, p: Lookup(_topic(p)),
    P: lambda r, p: Produce(_topic(p)),
    C: lambda r, p: Consume(_topic(p)),
    CS: lambda r, p: Consume(_topic(p), p["subscription"]),
    F: lambda r, p: Functions(_topic(p), _words(r, p)),
    NF: lambda r, p: NamespaceFunctions(p["tenant"], _required_namespace(p), _words(r, p)),
}


def requirement_for(method: str, path_template: str, path_params: Mapping[str, str]) -> Requirement:
    """What a request on route ``(method, path_template)`` with these (URL-decoded) path
    parameters needs. A route not in ``ROUTES``, or whose parameters do not fit its class,
    is ``Unclassified`` (denied to all). Raises InvalidTopicName (400) for invalid topic,
    tenant or namespace names."""
    route = ROUTES.get((method.upper(), path_template))
    if route is None:
        return Unclassified(method.upper(), path_template)
    try:
        return _FACTORIES[route.route_class](route, path_params)
    except KeyError:
        return Unclassified(method.upper(), path_template)
