"""Pulsar Functions never escalate privilege: a batch runs with a short-lived token of the
role that registered the function, minted by the trusted dispatcher; user code reaches
counters, state and topics only through the HTTP API with it (the memory service behind
the real handlers, authentication on), so it may do exactly what that role may; and each
batch runs in a child process that leaves nothing behind."""

from __future__ import annotations

import base64
import json
import logging
import textwrap
import time
from collections.abc import Mapping

import pytest
import requests
from auth_support import SECRET, auth_service, bearer, secret_reference

from magnetar_core.adapters.memory import memory_stores
from magnetar_core.api import function_runner
from magnetar_core.domain.errors import TopicNotFound
from magnetar_core.domain.security import Role, TenantInfo
from magnetar_core.domain.triggers.records import TargetAnswer, TargetFailed
from magnetar_core.engine import Engine
from magnetar_core.services.functions.credentials import FUNCTION_TOKEN_TTL_S, FunctionCredentials
from magnetar_core.services.functions.dispatch import FunctionDispatcher
from magnetar_core.services.triggers.delivery import records_of
from magnetar_local.memory_service import MemoryService, memory_settings
from magnetar_wire import serde, tokens
from magnetar_wire.names import TopicName

FQFN = "public/default/job"
SECRET_TOPIC = TopicName.parse("persistent://vault/private/ledger")


def source(body: str) -> str:
    return "import magnetar as pulsar\n\nclass Job(pulsar.Function):\n" + textwrap.indent(
        textwrap.dedent(body), "    "
    )


LEGIT = source("""
    def process(self, input, context):
        context.incr_counter("seen", 1)
        context.put_state("last", input)
        context.publish("audit", "saw " + input)
        return f"{input}! seen={context.get_counter('seen')} last={context.get_state('last')!r}"
""")
SPY = source("""
    def process(self, input, context):
        api = context._state  # the runner's API client: user code can always dig it out
        import urllib.request, urllib.error
        seen = {}
        for name, path in [
            ("trigger secrets", "/admin/v2/persistent/vault/private/ledger/triggers/hook"),
            ("another tenant", "/admin/v2/persistent/vault/private/ledger/examinemessage"),
            ("grant itself", "/admin/v2/namespaces/public/default/permissions/job-owner"),
        ]:
            method = "POST" if name == "grant itself" else "GET"
            request = urllib.request.Request(
                api._base + path, b'["produce"]' if method == "POST" else None,
                {"Authorization": "Bearer " + api._token, "Content-Type": "application/json"},
                method=method)
            try:
                seen[name] = urllib.request.urlopen(request).read().decode()
            except urllib.error.HTTPError as error:
                seen[name] = error.code
        context.get_logger().info("seen %s", seen)
        context.publish("persistent://vault/private/ledger", "forged")  # raises: 403
""")


class ApiSandbox:
    """The runner's code in this process (no fork), on the memory service's HTTP API."""

    def __init__(self, url: str) -> None:
        self.settings = function_runner.RunnerSettings(url)
        self.events: list[Mapping[str, object]] = []

    def run(self, event: Mapping[str, object]) -> TargetAnswer:
        self.events.append(event)
        answer = function_runner.handle(event, self.settings)
        return TargetAnswer(200, json.dumps(answer).encode())


def record(text: str, entry: int = 0) -> dict:
    return {"messageId": f"7:{entry}:-1:-1", "topic": "persistent://public/default/in",
            "key": None, "payload": base64.b64encode(text.encode()).decode(),
            "properties": {}, "eventTime": 0}  # fmt: skip


def payloads(svc: MemoryService, topic: str) -> list[str]:
    """Every message of ``topic`` (none when it does not exist), deserialized."""
    subs, name = svc.engine.subscriptions, TopicName.parse(topic)
    try:
        if subs.last_message_id(name) is None:
            return []
    except TopicNotFound:
        return []
    check = f"check-{time.monotonic_ns()}"
    handle = subs.subscribe(name, check, "c", "Shared", True)
    return [str(serde.deserialize(r.payload)) for r in records_of(subs.receive(name, check, handle.consumer_id, 100, 0))]  # fmt: skip


@pytest.fixture
def world():
    """The memory service with authentication on: ``job-owner`` may produce, consume and
    manage functions in public/default; tenant ``vault`` (not theirs) holds a topic with a
    secret and a webhook trigger with a signing secret."""
    grants = {"job-owner": ["produce", "consume", "functions"]}
    with auth_service(**grants) as svc:
        svc.stores.tenants.put("vault", TenantInfo(frozenset({Role("vault-admin")}), frozenset()))
        svc.stores.namespaces.create("vault/private")
        svc.engine.admin.create_topic(SECRET_TOPIC, None)
        svc.engine.producer.publish(SECRET_TOPIC, _entry(b"the vault's secret"))
        hook = {"target": {"type": "webhook", "url": "https://example.com/h", "secret": "s3cr3t"}}
        svc.engine.triggers.put(SECRET_TOPIC, "hook", hook)
        sandbox = ApiSandbox(svc.url)
        key = tokens.SigningKey.secret(SECRET)
        credentials = FunctionCredentials(True, lambda: key, lambda: int(time.time()))
        yield svc, sandbox, FunctionDispatcher(svc.stores.functions, sandbox, credentials, None)  # type: ignore[arg-type]


def _entry(payload: bytes) -> bytes:
    from magnetar_wire import EntryMessage, encode_entry

    return encode_entry([EntryMessage(payload=payload, sequence_id=0, publish_time_ms=1)], producer_name="p")  # fmt: skip


def register(svc: MemoryService, code: str, role: str = "job-owner") -> requests.Response:
    body = {"className": "job.Job", "code": code, "inputs": ["in"], "output": "out"}
    return requests.put(f"{svc.url}/admin/v3/functions/{FQFN}", json=body,
                        headers=bearer(role), timeout=10)  # fmt: skip


def test_a_function_runs_as_the_role_that_registered_it_never_one_its_body_names(world):
    svc, _, _ = world
    assert register(svc, LEGIT).status_code == 200
    assert svc.stores.functions.get("public", "default", "job").role == "job-owner"
    body = {"className": "job.Job", "code": LEGIT, "inputs": ["in"], "role": "admin"}
    answer = requests.put(f"{svc.url}/admin/v3/functions/{FQFN}", json=body,
                          headers=bearer("admin"), timeout=10)  # fmt: skip
    assert answer.status_code == 400 and "'role' is unknown" in answer.json()["message"]
    assert svc.stores.functions.get("public", "default", "job").role == "job-owner"


def test_each_batch_carries_a_token_of_the_functions_role_that_expires_in_two_minutes(world):
    svc, sandbox, dispatcher = world
    register(svc, LEGIT)
    before_s = int(time.time())

    dispatcher.handle(FQFN, {"records": [record("a")]})

    token = sandbox.events[0]["token"]
    claims = tokens.validate(str(token), tokens.VerificationKeys.of(SECRET), int(time.time()))
    assert claims.subject == "job-owner"
    assert before_s + FUNCTION_TOKEN_TTL_S <= (claims.expires_at_s or 0) <= int(time.time()) + FUNCTION_TOKEN_TTL_S  # fmt: skip
    assert sandbox.events[0]["config"]["code"] == LEGIT  # type: ignore[index]


def test_a_function_does_its_job_through_the_api_as_its_role(world):
    svc, _, dispatcher = world
    register(svc, LEGIT)

    answers = [dispatcher.handle(FQFN, {"records": [record(t, i)]}) for i, t in enumerate("ab")]

    assert answers == [{"batchItemFailures": []}] * 2
    assert payloads(svc, "out") == ["a! seen=1 last=b'a'", "b! seen=2 last=b'b'"]
    assert payloads(svc, "audit") == ["saw a", "saw b"]
    state = requests.get(f"{svc.url}/admin/v3/functions/{FQFN}/state/last",
                         headers=bearer("job-owner"), timeout=10)  # fmt: skip
    assert state.json() == {"key": "last", "byteValue": "Yg==", "stringValue": "b"}


def test_a_function_gets_nothing_its_role_may_not_have_and_its_log_says_why(world, caplog):
    svc, _, dispatcher = world
    register(svc, SPY)
    before = payloads(svc, str(SECRET_TOPIC))

    with caplog.at_level(logging.INFO):
        answer = dispatcher.handle(FQFN, {"records": [record("a")]})

    assert answer == {"batchItemFailures": [{"itemIdentifier": "7:0:-1:-1"}]}
    seen = next(r.args for r in caplog.records if r.getMessage().startswith("seen "))
    assert seen == {"trigger secrets": 403, "another tenant": 403, "grant itself": 403}
    failure = next(r for r in caplog.records if r.name == "magnetar.functions")
    refusal = "403 AuthorizationError: Role 'job-owner' is not authorized to look up persistent://vault/private/ledger"  # fmt: skip
    assert refusal in str(failure.exc_text)
    assert "s3cr3t" not in caplog.text and "the vault's secret" not in caplog.text
    assert payloads(svc, str(SECRET_TOPIC)) == before == ["the vault's secret"]
    assert payloads(svc, "out") == []
    permissions = svc.stores.permissions.get("public/default")
    assert permissions is not None and set(permissions.roles) == {
        Role("job-owner")
    }  # no grant made
    assert {a.value for a in permissions.namespace_actions(Role("job-owner"))} == {"produce", "consume", "functions"}  # fmt: skip


def test_revoking_the_roles_grant_stops_the_functions_next_batch(world):
    svc, _, dispatcher = world
    register(svc, LEGIT)
    assert dispatcher.handle(FQFN, {"records": [record("a")]}) == {"batchItemFailures": []}
    revoke = requests.delete(f"{svc.url}/admin/v2/namespaces/public/default/permissions/job-owner",
                             headers=bearer("admin"), timeout=10)  # fmt: skip
    assert revoke.status_code == 204

    answer = dispatcher.handle(FQFN, {"records": [record("b", 1)]})

    assert answer == {"batchItemFailures": [{"itemIdentifier": "7:1:-1:-1"}]}
    assert payloads(svc, "out") == ["a! seen=1 last=b'a'"]


def _engine(**settings: object) -> tuple[Engine, ApiSandbox]:
    sandbox = ApiSandbox("http://127.0.0.1:9")
    engine = Engine.assemble(memory_settings(**settings), memory_stores(), function_sandbox=sandbox)  # fmt: skip
    engine.tenants.initialize_cluster()
    return engine, sandbox


def test_with_authentication_off_a_batch_carries_no_token():
    engine, sandbox = _engine()
    engine.functions.put("public", "default", "job", {"className": "job.Job", "code": "x = 1", "inputs": ["in"]})  # fmt: skip
    with pytest.raises(TargetFailed):  # the code has no class Job: but the event was sent
        engine.function_dispatcher.handle(FQFN, {"records": []})
    assert sandbox.events[0]["token"] is None


def test_a_function_without_a_role_or_a_service_without_a_secret_key_fails_with_the_reason():
    auth = {"authentication_enabled": True, "superuser_roles": ("admin",)}
    engine, sandbox = _engine(**auth, token_secret_key=secret_reference())
    body = {"className": "job.Job", "code": "x = 1", "inputs": ["in"]}
    engine.functions.put("public", "default", "job", body)  # as with authentication off
    with pytest.raises(TargetFailed, match="registered while authentication was off"):
        engine.function_dispatcher.handle(FQFN, {"records": []})
    public_only, _ = _engine(**auth, token_public_key=_public_key())
    public_only.functions.put("public", "default", "job", body, role="app")
    with pytest.raises(TargetFailed, match="needs the service's secret token key"):
        public_only.function_dispatcher.handle(FQFN, {"records": []})
    assert sandbox.events == []


def _public_key() -> str:
    from magnetar_wire import token_keys

    pair = token_keys.new_key_pair("ES256")
    return "data:;base64," + base64.b64encode(pair.public_der).decode()


# -- the runner's child process --------------------------------------------------------------


def _batch(code: str) -> dict:
    config = {"className": "job.Job", "code": source(code), "inputs": ["in"]}
    return {"function": FQFN, "config": config, "version": 1, "records": [record("a")], "token": None}  # fmt: skip


SETTINGS = function_runner.RunnerSettings("http://127.0.0.1:9", batch_timeout_s=2.0)


def test_a_batch_runs_in_a_child_and_what_user_code_patches_dies_with_it():
    patch = """
        def process(self, input, context):
            import magnetar_wire.serde, magnetar_core.api.function_runner as runner
            magnetar_wire.serde.deserialize = None
            runner.SPIED = True
            print("a print goes to the log, not into the answer")
    """
    assert function_runner.run_isolated(_batch(patch), SETTINGS)["batchItemFailures"] == []
    assert serde.deserialize is not None and not hasattr(function_runner, "SPIED")


def test_a_batch_child_holds_nothing_of_the_runner_nor_of_earlier_batches(monkeypatch):
    monkeypatch.setattr(function_runner, "LINGERING", "an earlier batch's token", raising=False)
    look = """
        def process(self, input, context):
            import gc, magnetar_core.api.function_runner as runner
            if hasattr(runner, "LINGERING") or any(
                    isinstance(o, dict) and "an earlier batch's token" in o.values()
                    for o in gc.get_objects()):
                raise RuntimeError("the child sees the runner's memory")
    """
    earlier = {**_batch("def process(self, input, context):\n    return None\n"), "token": "an earlier batch's token"}  # fmt: skip
    assert function_runner.run_isolated(earlier, SETTINGS)["batchItemFailures"] == []

    assert function_runner.run_isolated(_batch(look), SETTINGS)["batchItemFailures"] == []
    assert function_runner.handle(_batch(look), SETTINGS) != {
        "batchItemFailures": []
    }  # here it would


def test_a_batch_child_may_start_no_process_nor_thread():
    check = """
        def process(self, input, context):
            import resource
            if resource.getrlimit(resource.RLIMIT_NPROC) != (0, 0):
                raise RuntimeError("the child may start processes")
    """
    assert function_runner.run_isolated(_batch(check), SETTINGS)["batchItemFailures"] == []
    assert function_runner.handle(_batch(check), SETTINGS) != {
        "batchItemFailures": []
    }  # here it may


def test_a_killed_zygote_is_started_again_for_the_next_batch():
    batch = _batch("def process(self, input, context):\n    return None\n")
    function_runner.run_isolated(batch, SETTINGS)
    zygote = function_runner.zygote_of(SETTINGS.api_url)
    zygote._process.kill()  # type: ignore[union-attr]  # noqa: SLF001 - as a child could
    zygote._process.wait()  # type: ignore[union-attr]  # noqa: SLF001

    assert function_runner.run_isolated(batch, SETTINGS)["batchItemFailures"] == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("def process(self, input, context):\n    import os; os._exit(3)\n", "process died"),
        (
            "def process(self, input, context):\n    import time; time.sleep(30)\n",
            "longer than 2 s",
        ),  # fmt: skip
        ("raise SystemExit('at load')\n", "failed: SystemExit"),
    ],
)
def test_a_batch_whose_child_dies_hangs_or_exits_fails_with_the_reason(body, reason):
    with pytest.raises(TargetFailed, match=reason):
        function_runner.run_isolated(_batch(body), SETTINGS)


# -- on AWS: the fan-out signs with the key parameter's secret key ---------------------------


class _Ssm:
    """An SSM client holding one parameter (what ``SsmParameters`` calls)."""

    def __init__(self, value: str) -> None:
        self.value, self.reads = value, 0

    def get_parameter(self, Name: str, WithDecryption: bool) -> dict:  # noqa: N803 - boto3's
        assert Name == "/magnetar/token-key" and WithDecryption
        self.reads += 1
        return {"Parameter": {"Value": self.value}}


def test_on_aws_the_dispatcher_signs_with_the_key_parameters_secret_read_once_on_first_use():
    from magnetar_core.engine.aws import function_keys_of
    from magnetar_core.services.functions.credentials import signing_key_of

    settings = memory_settings(authentication_enabled=True, token_key_parameter="/magnetar/token-key")  # fmt: skip
    ssm = _Ssm(base64.b64encode(SECRET).decode())
    keys = function_keys_of(settings, ssm)
    assert keys is not None and ssm.reads == 0  # nothing read until a batch needs it
    signing = signing_key_of(keys())
    assert signing is not None and ssm.reads == 1
    signing_key_of(keys())
    assert ssm.reads == 1
    token = tokens.create(signing, "app", int(time.time()) + 60)
    assert tokens.validate(token, tokens.VerificationKeys.of(SECRET), int(time.time())).subject == "app"  # fmt: skip
    public_only = function_keys_of(settings, _Ssm(json.dumps({"tokenPublicKey": _public_key()})))
    assert public_only is not None and signing_key_of(public_only()) is None
    assert function_keys_of(memory_settings(token_key_parameter="/magnetar/token-key")) is None
