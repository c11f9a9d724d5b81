"""Issue 12's role x route matrix on the emulator: every route of openapi.yaml, called by
every kind of caller, allowed or refused as Pulsar's ``PulsarAuthorizationProvider`` would,
and every refusal changing nothing (the route's topic and namespace read back).

Callers: four that prove no role (no token, expired, tampered, signed with another key:
401 on every route, even for the superuser's role), and seven roles: ``producer`` (produce on
the namespace), ``consumer`` (consume, and the one role subscription ``sub`` is restricted
to), ``restricted`` (consume, not listed on ``sub``), ``other-admin`` (admin of another
tenant), ``tenant-admin`` (the tenant's admin), ``superuser``, and ``function``: a Pulsar
Function's batch token, minted by the trusted dispatcher (``FunctionCredentials``) for the
role that registered the function (``fn-owner``: produce, consume and functions on the
namespace), so user code may do exactly what that role may. The expected classes are
written here, from Pulsar's rules, not read from ``domain.security.routes``.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests
import yaml

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role, TenantInfo
from magnetar_core.services.functions.credentials import FunctionCredentials
from magnetar_local.secured import SecuredGateway
from magnetar_local.template import DEFAULT_TEMPLATE
from magnetar_wire import token_keys, tokens
from magnetar_wire.names import TopicName

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
    paths = yaml.safe_load(OPENAPI.read_text())["paths"]
    verbs = ("get", "post", "put", "delete")
    return [(m.upper(), p) for p, ops in paths.items() for m in ops if m in verbs]


class World:
    """One tenant ``acme-<id>`` (admin ``tenant-admin``) with namespace ``orders`` and its
    grants, another tenant administered by ``other-admin``, and a topic per route."""

    def __init__(self, secured: SecuredGateway) -> None:
        self.secured = secured
        self.tenant = f"acme-{uuid.uuid4().hex[:8]}"
        self.namespace = f"{self.tenant}/orders"
        stores = secured.stores
        admins = frozenset({Role("tenant-admin")})
        stores.tenants.put(self.tenant, TenantInfo(admin_roles=admins))
        stores.namespaces.create(self.namespace)
        stores.tenants.put(
            f"other-{self.tenant}", TenantInfo(admin_roles=frozenset({Role("other-admin")}))
        )
        p, c = AuthAction.PRODUCE, AuthAction.CONSUME
        permissions = (
            NamespacePermissions()
            .grant(Role("producer"), [p])
            .grant(Role("consumer"), [c])
            .grant(Role("restricted"), [c])
            .grant(Role("fn-owner"), [p, c, AuthAction.FUNCTIONS])
            .grant_subscription("sub", [Role("consumer")])
        )
        stores.permissions.put(self.namespace, permissions)
        other_key = token_keys.new_secret_key()
        superuser = secured.superuser
        header, _, signature = secured.token(superuser).split(".")
        claims = base64url(b'{"sub":"%s","exp":4000000000}' % superuser.encode())
        self.callers: dict[str, dict[str, str]] = {
            "anonymous": {},
            "expired": _bearer(secured.token(superuser, expires_at_s=int(time.time()) - 60)),
            "tampered": _bearer(f"{header}.{claims}.{signature}"),
            "wrong-key": _bearer(tokens.create(tokens.SigningKey.secret(other_key), superuser)),
            **{role: secured.headers(self.role_of(role)) for role in ROLES if role != "function"},
            "function": _bearer(self._function_token()),
        }

    def _function_token(self) -> str:
        """The batch token the dispatcher mints for a function ``fn-owner`` registered."""
        body = {"className": "f.F", "code": "class F: pass", "inputs": ["in"]}
        config = FunctionConfig.parse(self.tenant, "orders", "f", body).with_role("fn-owner")
        key = tokens.SigningKey.secret(self.secured.secret_key)
        token = FunctionCredentials(True, lambda: key, lambda: int(time.time())).token_for(config)
        assert token is not None and tokens.show(token)[1]["sub"] == "fn-owner"
        return token

    def role_of(self, caller: str) -> str:
        """The role a caller's token names (``superuser``: the gateway's superuser role;
        ``function``: the role that registered the function)."""
        if caller == "function":
            return "fn-owner"
        return self.secured.superuser if caller == "superuser" else caller

    def arrange(self, index: int) -> TopicName:
        """A topic with one message and subscription ``sub`` with the tenant admin's consumer."""
        topic = TopicName.parse(f"persistent://{self.namespace}/mx-{index}")
        engine = self.secured.engine
        engine.producer.publish(topic, _entry())
        engine.subscriptions.subscribe(topic, "sub", "admins", "Shared", True, role="tenant-admin")
        return topic

    def consumer_of(self, topic: TopicName, role: str) -> str:
        """A consumer of ``sub`` registered by ``role``'s role."""
        name = self.role_of(role)
        handle = self.secured.engine.subscriptions.subscribe(
            topic, "sub", name, "Shared", True, role=name
        )
        return handle.consumer_id

    def snapshot(self, topic: TopicName) -> tuple:
        """What a refusal must leave as it was: the namespace's topics and policies, the
        topic's log head, its cursors (each write bumps a version) and producer lease."""
        stores = self.secured.stores
        metas = sorted((m.name.local, m.version) for m in stores.topics.list(self.namespace))
        key = self.secured.engine.topics.resolve(topic, create=False).key
        cursors = sorted((c.subscription, c.version) for c in stores.cursors.list(key))
        lease = stores.producer_state.lease(key)
        policies = stores.policies.get(self.namespace)
        return metas, stores.log.head(key), cursors, (lease.epoch, lease.version), policies


def base64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _entry() -> bytes:
    from magnetar_wire import EntryMessage, encode_entry

    message = EntryMessage(payload=b"m", sequence_id=0, publish_time_ms=1)
    return encode_entry([message], producer_name="arrange")


def _body(path: str) -> Any:
    for tail in ("state/{key}", "counters/{key}"):
        if path.endswith(tail):
            return BODIES[tail]
    last = path.rstrip("/").rsplit("/", 1)[1]
    return BODIES.get(last)


def test_every_route_of_openapi_has_an_expected_class_here():
    assert sorted(set(openapi_routes()) - set(EXPECTED)) == []


DESTRUCTIVE = {"DELETE", "PUT"}
"""Routes of these methods, unsubscribe and terminate, get a topic of their own (they delete it,
its subscription, or create it partitioned); the others share one."""


def _own_topic(method: str, template: str) -> bool:
    return method in DESTRUCTIVE or template.endswith(("/unsubscribe", "/terminate"))


@pytest.mark.slow  # ~20 s: started first on its worker, not left to the end of the run
def test_each_caller_is_allowed_or_refused_on_each_route_as_pulsar_and_refusals_change_nothing(
    secured_gateway, local_stack
):
    local_stack.functions.register("fn", lambda event, context: None)  # the triggers' target
    world = World(secured_gateway)
    routes = openapi_routes()
    shared = world.arrange(0)
    topics = [world.arrange(i + 1) if _own_topic(*r) else shared for i, r in enumerate(routes)]
    admins = {t: world.consumer_of(t, "tenant-admin") for t in set(topics)}
    session = requests.Session()

    def call(index: int, caller: str, consumer: str) -> requests.Response:
        method, template = routes[index]
        fill = {
            "domain": "persistent", "tenant": world.tenant, "namespace": "orders",
            "topic": topics[index].local, "subscription": "sub", "role": "someone",
            "producerName": f"p-{caller}", "consumerId": consumer, "name": "hook",
            "numMessages": "1", "expireTimeInSeconds": "0", "timestamp": "0",
            "messagePosition": "1", "ledgerId": "1", "entryId": "0", "version": "0",
            "proxy+": "console.js", "key": "k",
        }  # fmt: skip
        url = secured_gateway.url + template.format_map(fill)
        headers = world.callers[caller]
        return session.request(method, url, json=_body(template), headers=headers, timeout=60)

    def refusals(index: int) -> list[tuple[str, int]]:
        allowed = ALLOWED[EXPECTED[routes[index]]]
        refused = tuple(c for c in NOT_A_ROLE + ROLES if c not in allowed)
        out = []
        for caller in refused:  # on the tenant admin's consumer: refused before it matters
            answer = call(index, caller, admins[topics[index]])
            expected = 401 if caller in NOT_A_ROLE else 403
            assert answer.status_code == expected, (caller, routes[index], answer.text)
            if expected == 403:
                refusal = f"Role '{world.role_of(caller)}' is not authorized"
                assert answer.json()["message"].startswith(refusal), answer.text
            out.append((caller, expected))
        return out

    def admissions(index: int) -> list[tuple[str, int]]:
        out = []
        for caller in sorted(ALLOWED[EXPECTED[routes[index]]]):
            own = "{consumerId}" in routes[index][1]
            consumer = world.consumer_of(topics[index], caller) if own else ""
            answer = call(index, caller, consumer)
            assert answer.status_code not in (401, 403), (caller, routes[index], answer.text)
            out.append((caller, answer.status_code))
        return out

    before = {t: world.snapshot(t) for t in set(topics)}
    with ThreadPoolExecutor(4) as pool:
        refused = [r for rows in pool.map(refusals, range(len(routes))) for r in rows]
    assert {t: world.snapshot(t) for t in set(topics)} == before  # every refusal: nothing
    with ThreadPoolExecutor(4) as pool:
        admitted = [r for rows in pool.map(admissions, range(len(routes))) for r in rows]
    cells = len(routes) * (len(NOT_A_ROLE) + len(ROLES))
    assert len(refused) + len(admitted) == cells
    statuses = Counter(status for _, status in refused + admitted)
    print(f"\nauth matrix: {len(routes)} routes x {len(NOT_A_ROLE) + len(ROLES)} callers = {cells}: "
          f"{len(admitted)} allowed, {len(refused)} refused; statuses {dict(statuses)}")  # fmt: skip


@pytest.mark.parametrize("caller", ["consumer", "restricted"])
def test_a_subscription_restricted_to_named_roles_admits_only_them(secured_gateway, caller):
    world = World(secured_gateway)
    topic = world.arrange(0)
    url = f"{secured_gateway.url}/v1/persistent/{world.namespace}/{topic.local}"
    subscribe = BODIES["consumers"]
    for subscription, open_to_caller in (("sub", caller == "consumer"), ("free", True)):
        answer = requests.post(
            f"{url}/subscriptions/{subscription}/consumers",
            json=subscribe,
            headers=world.callers[caller],
            timeout=10,
        )
        assert (answer.status_code == 200) == open_to_caller, (subscription, answer.text)
