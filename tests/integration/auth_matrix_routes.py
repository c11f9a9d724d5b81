"""The route table of the role x route matrix (test_auth_matrix.py): every route of
openapi.yaml, the class of callers Pulsar's ``PulsarAuthorizationProvider`` admits on it, and
a body to send. The expected classes are written here, from Pulsar's rules, not read from
``domain.security.routes``."""

from __future__ import annotations

from typing import Any

import yaml

from magnetar_local.template import DEFAULT_TEMPLATE

OPENAPI = DEFAULT_TEMPLATE.parent / "openapi.yaml"
NOT_A_ROLE = ("anonymous", "expired", "tampered", "wrong-key")
ROLES = ("producer", "consumer", "restricted", "other-admin", "tenant-admin", "superuser",
         "function")  # fmt: skip
ALLOWED = {
    "superuser": {"superuser"},
    "any role": set(ROLES),
    "tenant admin": {"tenant-admin", "superuser"},
    "lookup": {"producer", "consumer", "restricted", "tenant-admin", "superuser", "function"},
    "produce": {"producer", "tenant-admin", "superuser", "function"},
    "consume": {"consumer", "restricted", "tenant-admin", "superuser", "function"},
    "consume sub": {"consumer", "tenant-admin", "superuser"},
    "functions": {"tenant-admin", "superuser", "function"},
    "public": set(ROLES) | set(NOT_A_ROLE),
}
"""Route class -> the roles Pulsar allows (``lookup`` includes listing a namespace;
``functions``: triggers and functions, which only ``function``'s role holds by grant;
``public``: the console's page and
script, which hold no data and are served to every caller, with or without a token)."""

_NS = "/admin/v2/namespaces/{tenant}/{namespace}"
QUOTA_ROUTES = {
    "backlogQuotaMap": "GET", "backlogQuota": "POST DELETE", "publishRate": "GET POST DELETE",
    "dispatchRate": "GET POST DELETE", "subscriptionDispatchRate": "GET POST DELETE",
    "subscribeRate": "GET POST DELETE",
}  # fmt: skip
"""Backlog quotas and rates (issue 14): namespace and topic policies, tenant admin's."""
_TOPIC = "/admin/v2/{domain}/{tenant}/{namespace}/{topic}"
_V1 = "/v1/{domain}/{tenant}/{namespace}/{topic}"
_CONSUMER = _V1 + "/subscriptions/{subscription}/consumers/{consumerId}"
_SUB = _TOPIC + "/subscription/{subscription}"
_SCHEMAS = "/admin/v2/schemas/{tenant}/{namespace}/{topic}"
EXPECTED: dict[tuple[str, str], str] = {
    ("GET", "/admin/v2/brokers/health"): "superuser",
    **{
        (m, f"{_NS}/{p}"): "tenant admin"
        for p, ms in {
            "deduplication": "GET POST DELETE",
            "maxMessageSize": "GET POST",
            "delayedDelivery": "GET POST DELETE",
            "retention": "GET POST DELETE",
            "messageTTL": "GET POST DELETE",
            **QUOTA_ROUTES,
        }.items()
        for m in ms.split()
    },  # fmt: skip
    **{
        (m, f"{_TOPIC}/{p}"): "tenant admin"
        for p, ms in {
            "deduplicationEnabled": "GET POST",
            "retention": "GET POST DELETE",
            "messageTTL": "GET POST DELETE",
            "compaction": "GET PUT",
            **QUOTA_ROUTES,
        }.items()
        for m in ms.split()
    },  # fmt: skip
    ("GET", "/admin/v2/{domain}/{tenant}/{namespace}"): "lookup",
    ("GET", "/admin/v2/{domain}/{tenant}/{namespace}/partitioned"): "lookup",
    ("PUT", _TOPIC): "tenant admin",
    ("DELETE", _TOPIC): "tenant admin",
    ("PUT", _TOPIC + "/partitions"): "tenant admin",
    ("DELETE", _TOPIC + "/partitions"): "tenant admin",
    ("GET", _TOPIC + "/partitions"): "lookup",
    ("GET", _TOPIC + "/stats"): "lookup",
    ("GET", "/console"): "public",
    ("GET", "/console/{proxy+}"): "public",
    ("GET", "/console/api/history/{domain}/{tenant}/{namespace}/{topic}"): "lookup",
    ("GET", _TOPIC + "/partitioned-stats"): "lookup",
    ("GET", _TOPIC + "/lastMessageId"): "consume",
    ("GET", _TOPIC + "/subscriptions"): "consume",
    ("DELETE", _TOPIC + "/subscription/{subscription}"): "consume sub",
    ("POST", _V1 + "/messages"): "produce",
    ("POST", _V1 + "/uploads"): "produce",
    ("POST", _V1 + "/producers"): "produce",
    ("POST", _V1 + "/producers/{producerName}/heartbeat"): "produce",
    ("DELETE", _V1 + "/producers/{producerName}"): "produce",
    ("POST", _V1 + "/subscriptions/{subscription}/consumers"): "consume sub",
    ("DELETE", _CONSUMER): "consume sub",
    **{
        ("POST", f"{_CONSUMER}/{verb}"): "consume sub"
        for verb in ("unsubscribe", "heartbeat", "seek", "receive", "ack", "nack", "redeliver")
    },  # fmt: skip
    # issue 12's tenancy routes, covered once openapi.yaml lists them
    ("GET", "/admin/v2/clusters"): "any role",
    **{(m, "/admin/v2/tenants/{tenant}"): "superuser" for m in ("GET", "PUT", "POST", "DELETE")},
    ("GET", "/admin/v2/tenants"): "superuser",
    ("GET", "/admin/v2/namespaces/{tenant}"): "tenant admin",
    **{(m, _NS): "tenant admin" for m in ("GET", "PUT", "DELETE")},
    ("GET", _NS + "/topics"): "lookup",
    ("GET", _NS + "/permissions"): "tenant admin",
    ("POST", _NS + "/permissions/{role}"): "tenant admin",
    ("DELETE", _NS + "/permissions/{role}"): "tenant admin",
    ("GET", _NS + "/permissions/subscription"): "tenant admin",
    ("POST", _NS + "/permissions/subscription/{subscription}"): "tenant admin",
    ("DELETE", _NS + "/permissions/{subscription}/{role}"): "tenant admin",
    ("GET", _TOPIC + "/permissions"): "tenant admin",
    ("POST", _TOPIC + "/permissions/{role}"): "tenant admin",
    ("DELETE", _TOPIC + "/permissions/{role}"): "tenant admin",
    # issue 13's triggers
    ("GET", _TOPIC + "/triggers"): "functions",
    **{(m, _TOPIC + "/triggers/{name}"): "functions" for m in ("GET", "PUT", "DELETE")},
    # issue 13's Pulsar Functions: the namespace's functions permission, as triggers
    ("GET", "/admin/v3/functions/{tenant}/{namespace}"): "functions",
    **{
        (m, "/admin/v3/functions/{tenant}/{namespace}/{name}"): "functions"
        for m in ("GET", "POST", "PUT", "DELETE")
    },  # fmt: skip
    # a function's counters and state: what its runner calls with its batch token
    **{
        (m, "/admin/v3/functions/{tenant}/{namespace}/{name}/state/{key}"): "functions"
        for m in ("GET", "POST")
    },  # fmt: skip
    **{
        (m, "/admin/v3/functions/{tenant}/{namespace}/{name}/counters/{key}"): "functions"
        for m in ("GET", "POST", "DELETE")
    },  # fmt: skip
    # pulsar-admin's functions status, stats, start, stop, restart, trigger
    **{
        (m, f"/admin/v3/functions/{{tenant}}/{{namespace}}/{{name}}/{verb}"): "functions"
        for m, verb in [("GET", "status"), ("GET", "stats")]
        + [("POST", v) for v in ("start", "stop", "restart", "trigger")]
    },
    # issue 14's subscription verbs: Pulsar's SUBSCRIBE, SKIP, EXPIRE_MESSAGES, RESET_CURSOR
    # and PEEK_MESSAGES are consume operations (with the subscription's permission where
    # the path names one); the namespace's CLEAR_BACKLOG and UNSUBSCRIBE need consume on it
    ("PUT", _SUB): "consume sub",
    **{
        ("POST", _SUB + verb): "consume sub"
        for verb in (
            "/skip/{numMessages}",
            "/skip_all",
            "/expireMessages/{expireTimeInSeconds}",
            "/resetcursor/{timestamp}",
            "/resetcursor",
        )
    },  # fmt: skip
    ("GET", _SUB + "/position/{messagePosition}"): "consume sub",
    ("POST", _TOPIC + "/all_subscription/expireMessages/{expireTimeInSeconds}"): "consume",
    ("GET", _TOPIC + "/examinemessage"): "consume",
    ("GET", _TOPIC + "/ledger/{ledgerId}/entry/{entryId}"): "consume",
    ("POST", _NS + "/clearBacklog"): "consume",
    ("POST", _NS + "/clearBacklog/{subscription}"): "consume",
    ("POST", _NS + "/unsubscribe/{subscription}"): "consume",
    # issue 14's topic verbs: Pulsar's TERMINATE, UNLOAD, TRUNCATE, partition updates
    ("POST", _TOPIC + "/terminate"): "tenant admin",
    ("POST", _TOPIC + "/terminate/partitions"): "tenant admin",
    ("PUT", _TOPIC + "/unload"): "tenant admin",
    ("DELETE", _TOPIC + "/truncate"): "tenant admin",
    ("POST", _TOPIC + "/partitions"): "tenant admin",
    # issue 15's schema registry, as Pulsar's SchemasResource: GET_METADATA (lookup) for
    # reads, PRODUCE to post, the tenant's admin to delete and to test compatibility
    **{
        (m, f"{_NS}/{p}"): "tenant admin"
        for p, ms in {
            "schemaCompatibilityStrategy": "GET PUT",
            "isAllowAutoUpdateSchema": "GET POST",
            "schemaValidationEnforced": "GET POST",
        }.items()
        for m in ms.split()
    },  # fmt: skip
    ("GET", _SCHEMAS + "/schema"): "lookup",
    ("GET", _SCHEMAS + "/schema/{version}"): "lookup",
    ("GET", _SCHEMAS + "/schemas"): "lookup",
    ("POST", _SCHEMAS + "/version"): "lookup",
    ("POST", _SCHEMAS + "/schema"): "produce",
    ("DELETE", _SCHEMAS + "/schema"): "tenant admin",
    ("POST", _SCHEMAS + "/compatibility"): "tenant admin",
}
BODIES: dict[str, Any] = {
    "messages": {"messages": [{"value": "m"}]},
    "producers": {"accessMode": "Shared"},
    "consumers": {"subscriptionType": "Shared", "initialPosition": "Earliest"},
    "seek": {"timestamp": 0},
    "receive": {"maxMessages": 1, "waitMs": 0},
    "ack": {"messageIds": []},
    "nack": {"messageIds": []},
    "deduplication": True,
    "deduplicationEnabled": True,
    "maxMessageSize": 1024,
    "messageTTL": 60,
    "retention": {"retentionTimeInMinutes": 1, "retentionSizeInMB": 1},
    "delayedDelivery": {"active": True, "tickTime": 1000},
    "backlogQuota": {"limitSize": 1024, "policy": "producer_request_hold"},
    "publishRate": {"publishThrottlingRateInMsg": 1000},
    "dispatchRate": {"dispatchThrottlingRateInMsg": 1000},
    "subscriptionDispatchRate": {"dispatchThrottlingRateInMsg": 1000},
    "subscribeRate": {"subscribeThrottlingRatePerConsumer": 1000},
    "partitions": 2,
    "{role}": ["produce"],
    "{subscription}": ["consumer"],
    "{name}": {"target": {"type": "lambda", "function": "fn"}},
    "resetcursor": {"ledgerId": 1, "entryId": 0},
    "schema": {"type": "STRING", "schema": ""},
    "compatibility": {"type": "STRING", "schema": ""},
    "version": {"type": "STRING", "schema": ""},
    "schemaCompatibilityStrategy": "FULL",
    "isAllowAutoUpdateSchema": True,
    "schemaValidationEnforced": False,
    "state/{key}": {"stringValue": "v"},
    "counters/{key}": {"amount": 1},
    "trigger": {"data": "m"},
}


def openapi_routes() -> list[tuple[str, str]]:
    """(method, path template) of every operation of openapi.yaml, in its order."""
    paths = yaml.safe_load(OPENAPI.read_text())["paths"]
    verbs = ("get", "post", "put", "delete")
    return [(m.upper(), p) for p, ops in paths.items() for m in ops if m in verbs]


def body_of(path: str) -> Any:
    """The JSON body sent to a route (by its path's last part), or None."""
    for tail in ("state/{key}", "counters/{key}"):
        if path.endswith(tail):
            return BODIES[tail]
    last = path.rstrip("/").rsplit("/", 1)[1]
    return BODIES.get(last)
