"""Pulsar Functions cannot escalate privilege on the embedded stack (``magnetar local --auth``
in a process of its own, as a user runs it): user code runs in a runner process without AWS
credentials or the emulator's endpoint, and reaches the service only through the HTTP API
with a short-lived token of the role that registered the function. A spy function gets
nothing from the tables (boto3), another tenant's topic, trigger secrets or a self-grant,
and nothing leaks into its output; a legitimate one consumes, publishes, keeps state and
counters."""

from __future__ import annotations

import base64
import json
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
import requests
from local_process import LocalProcess

from magnetar_wire import tokens

LEGIT = textwrap.dedent("""
    import magnetar as pulsar

    class Tally(pulsar.Function):
        def process(self, input, context):
            context.incr_counter("seen", 1)
            context.put_state("last", input)
            return f"{input} #{context.get_counter('seen')} after {context.get_state('last')!r}"
""")
SPY = textwrap.dedent("""
    import json, os, urllib.error, urllib.request
    import magnetar as pulsar

    class Spy(pulsar.Function):
        def process(self, input, context):
            seen = {"aws": sorted(k for k in os.environ if k.startswith("AWS"))}
            try:
                import boto3
                seen["tables"] = boto3.client("dynamodb", region_name="us-east-1").list_tables()
            except Exception as error:
                seen["tables"] = type(error).__name__
            api = context._state  # the runner's API client: user code can dig out its token
            for name, method, path in [
                ("trigger secrets", "GET", "/admin/v2/persistent/vault/private/ledger/triggers/hook"),
                ("another tenant", "GET", "/admin/v2/persistent/vault/private/ledger/examinemessage"),
                ("grant itself", "POST", "/admin/v2/namespaces/vault/private/permissions/fn-owner"),
            ]:
                request = urllib.request.Request(
                    api._base + path, b'["consume"]' if method == "POST" else None,
                    {"Authorization": "Bearer " + api._token, "Content-Type": "application/json"},
                    method=method)
                try:
                    seen[name] = urllib.request.urlopen(request, timeout=10).read().decode()
                except urllib.error.HTTPError as error:
                    seen[name] = error.code
            try:
                context.publish("persistent://vault/private/ledger", "forged")
                seen["forge"] = "published"
            except Exception as error:
                seen["forge"] = str(error)
            return json.dumps(seen)
""")


class Stack(LocalProcess):
    """``magnetar local --auth --port 0`` in ``folder``; its log lines in ``logs``."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, "--auth")
        self.key = self.signing_key()

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens.create(self.key, role)}"}

    def call(self, method: str, path: str, role: str = "admin", body: object = None) -> requests.Response:  # fmt: skip
        answer = requests.request(method, self.url + path, json=body, headers=self.headers(role), timeout=30)  # fmt: skip
        assert answer.status_code < 300, (method, path, answer.text)
        return answer


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The stack; tenant ``acme`` (namespace ``app``: ``fn-owner`` may produce, consume and
    manage functions) and tenant ``vault`` (namespace ``private``: a topic holding a secret,
    a webhook trigger signed with a secret), neither granting ``fn-owner`` anything else."""
    running = Stack(tmp_path_factory.mktemp("isolated"))
    try:
        for tenant, namespace in (("acme", "app"), ("vault", "private")):
            running.call(
                "PUT",
                f"/admin/v2/tenants/{tenant}",
                body={"adminRoles": ["admin"], "allowedClusters": ["magnetar"]},
            )
            running.call("PUT", f"/admin/v2/namespaces/{tenant}/{namespace}")
        grant = ["produce", "consume", "functions"]
        running.call("POST", "/admin/v2/namespaces/acme/app/permissions/fn-owner", body=grant)
        ledger = "/v1/persistent/vault/private/ledger"
        running.call("POST", ledger + "/messages", body=message("the vault's secret"))  # fmt: skip
        hook = {"target": {"type": "webhook", "url": "https://127.0.0.1:9/h", "secret": "s3cr3t-hook"}}  # fmt: skip
        running.call("PUT", "/admin/v2/persistent/vault/private/ledger/triggers/hook", body=hook)
        yield running
    finally:
        running.stop()


def message(text: str) -> dict:
    return {"messages": [{"payload": base64.b64encode(text.encode()).decode()}]}


def run_function(stack: Stack, code: str, class_name: str, *inputs: str) -> list[str]:
    """Register ``code`` as ``fn-owner``, produce ``inputs`` and return its outputs."""
    uid = uuid.uuid4().hex[:8]
    name, source, sink = f"fn-{uid}", f"persistent://acme/app/in-{uid}", f"persistent://acme/app/out-{uid}"  # fmt: skip
    body = {"className": class_name, "code": code, "inputs": [source], "output": sink,
            "subscriptionPosition": "Earliest"}  # fmt: skip
    stack.call("PUT", f"/admin/v3/functions/acme/app/{name}", "fn-owner", body)
    for text in inputs:
        stack.call("POST", f"/v1/persistent/acme/app/in-{uid}/messages", "fn-owner", message(text))  # fmt: skip
    consumer = stack.call("POST", f"/v1/persistent/acme/app/out-{uid}/subscriptions/check/consumers", "fn-owner",
                          {"subscriptionType": "Exclusive", "initialPosition": "Earliest"}).json()  # fmt: skip
    receive = f"/v1/persistent/acme/app/out-{uid}/subscriptions/check/consumers/{consumer['consumerId']}/receive"  # fmt: skip
    got: list[str] = []
    deadline = time.monotonic() + 60
    while len(got) < len(inputs):
        assert time.monotonic() < deadline, f"outputs {got}; log:\n{''.join(stack.logs[-40:])}"
        answer = stack.call("POST", receive, "fn-owner", {"maxMessages": 10, "waitMs": 1000}).json()  # fmt: skip
        got += [base64.b64decode(m["payload"]).decode() for m in answer["messages"]]
    return got


def test_a_function_does_its_job_as_its_role_on_the_embedded_stack(stack):
    outputs = run_function(stack, LEGIT, "tally.Tally", "a", "b")
    assert outputs == ["a #1 after b'a'", "b #2 after b'b'"]


def test_a_spy_function_reaches_no_store_nor_what_its_role_may_not_and_nothing_leaks(stack):
    [output] = run_function(stack, SPY, "spy.Spy", "go")

    seen = json.loads(output)
    assert seen["aws"] == ["AWS_CONFIG_FILE", "AWS_EC2_METADATA_DISABLED", "AWS_SHARED_CREDENTIALS_FILE"]  # fmt: skip
    assert seen["tables"] == "NoCredentialsError"
    assert (seen["trigger secrets"], seen["another tenant"], seen["grant itself"]) == (
        403,
        403,
        403,
    )
    assert "403 AuthorizationError: Role 'fn-owner' is not authorized" in seen["forge"]
    assert "s3cr3t-hook" not in output and "the vault's secret" not in output
    # the stack's own tables hold what the spy was denied, and the vault is unchanged
    dynamodb = boto3.client("dynamodb", endpoint_url=stack.aws, region_name="us-east-1",
                            aws_access_key_id="x", aws_secret_access_key="x")  # fmt: skip
    assert any("topics" in name for name in dynamodb.list_tables()["TableNames"])
    stats = stack.call("GET", "/admin/v2/persistent/vault/private/ledger/stats").json()
    assert stats["msgInCounter"] == 1
    permissions = stack.call("GET", "/admin/v2/namespaces/vault/private/permissions").json()
    assert "fn-owner" not in permissions
