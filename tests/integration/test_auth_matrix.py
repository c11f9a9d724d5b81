"""Issue 12's role x route matrix: every route of openapi.yaml, called by every kind of
caller, allowed or refused as Pulsar's ``PulsarAuthorizationProvider`` would, and every
refusal changing nothing (the route's topic and namespace read back).

Callers: four that prove no role (no token, expired, tampered, signed with another key:
401 on every route, even for the superuser's role), and seven roles: ``producer`` (produce on
the namespace), ``consumer`` (consume, and the one role subscription ``sub`` is restricted
to), ``restricted`` (consume, not listed on ``sub``), ``other-admin`` (admin of another
tenant), ``tenant-admin`` (the tenant's admin), ``superuser``, and ``function``: a Pulsar
Function's batch token, minted by the trusted dispatcher (``FunctionCredentials``) for the
role that registered the function (``fn-owner``: produce, consume and functions on the
namespace), so user code may do exactly what that role may. The expected classes are
written in auth_matrix_routes.py, from Pulsar's rules, not read from ``domain.security.routes``.

Where it runs: the whole matrix (every route x every caller, about 1,600 requests) on a
``SecuredMemoryService``: the same gateway, handlers, token checks and authorization as on
the emulator, on in-memory stores. Authorization is decided above the stores (the guard reads
the tenant's admins and the namespace's grants through the store ports, whose memory and AWS
adapters are held to one contract in tests/contract), so the emulator adds nothing the matrix
asserts; it cost 28-36 CPU-s there, nearly all of it boto3 and moto serving the handlers'
DynamoDB and S3 calls (py-spy: two thirds of the samples). On the emulator
(``SecuredGateway``) every caller still meets one route of each class (``EMULATOR_SAMPLE``),
so the AWS adapters' reads of tenants and grants are held to the same rules, and the
restricted subscription's test below runs there too.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from auth_matrix_routes import ALLOWED, BODIES, EXPECTED, NOT_A_ROLE, ROLES, body_of, openapi_routes

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role, TenantInfo
from magnetar_core.services.functions.credentials import FunctionCredentials
from magnetar_local.secured import SecuredGateway, SecuredMemoryService
from magnetar_wire import token_keys, tokens
from magnetar_wire.names import TopicName

Secured = SecuredGateway | SecuredMemoryService


class World:
    """One tenant ``acme-<id>`` (admin ``tenant-admin``) with namespace ``orders`` and its
    grants, another tenant administered by ``other-admin``, and a topic per route."""

    def __init__(self, secured: Secured) -> None:
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


def test_every_route_of_openapi_has_an_expected_class_here():
    assert sorted(set(openapi_routes()) - set(EXPECTED)) == []


DESTRUCTIVE = {"DELETE", "PUT"}
"""Routes of these methods, unsubscribe and terminate, get a topic of their own (they delete it,
its subscription, or create it partitioned); the others share one."""


def _own_topic(method: str, template: str) -> bool:
    return method in DESTRUCTIVE or template.endswith(("/unsubscribe", "/terminate"))


def check_matrix(secured: Secured, routes: list[tuple[str, str]]) -> Counter[int]:
    """Every caller on each of ``routes`` through ``secured``: refused (401 without a role,
    403 naming the role) where Pulsar refuses, and nothing stored changed by the refusals (a
    snapshot of every topic before and after them all); admitted (neither) where it allows.
    Returns the statuses' counts."""
    world = World(secured)
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
        url = secured.url + template.format_map(fill)
        headers = world.callers[caller]
        return session.request(method, url, json=body_of(template), headers=headers, timeout=60)

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
    assert {caller for caller, _ in refused + admitted} == set(NOT_A_ROLE + ROLES)
    return Counter(status for _, status in refused + admitted)


@pytest.fixture(scope="module")
def secured_memory():
    """A started ``SecuredMemoryService`` (superuser ``admin``) for the module."""
    with SecuredMemoryService() as service:
        yield service


def test_each_caller_is_allowed_or_refused_on_each_route_as_pulsar_and_refusals_change_nothing(
    secured_memory,
):
    routes = openapi_routes()
    statuses = check_matrix(secured_memory, routes)
    cells = len(routes) * (len(NOT_A_ROLE) + len(ROLES))
    print(f"\nauth matrix: {len(routes)} routes x {len(NOT_A_ROLE) + len(ROLES)} callers = "
          f"{cells}; statuses {dict(statuses)}")  # fmt: skip


def emulator_sample() -> list[tuple[str, str]]:
    """The first route of each class of callers, in openapi.yaml's order."""
    first: dict[str, tuple[str, str]] = {}
    for route in openapi_routes():
        first.setdefault(EXPECTED[route], route)
    return list(first.values())


def test_on_the_emulator_each_caller_is_allowed_or_refused_on_a_route_of_each_class(
    secured_gateway, local_stack
):
    local_stack.functions.register("fn", lambda event, context: None)  # the triggers' target
    sample = emulator_sample()
    assert {EXPECTED[route] for route in sample} == set(ALLOWED)
    statuses = check_matrix(secured_gateway, sample)
    assert statuses[401] and statuses[403], statuses


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
