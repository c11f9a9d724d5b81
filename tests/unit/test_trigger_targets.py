"""Trigger target adapters: the webhook's signed POST (answers of any status returned, no
answer -> TargetFailed), local functions, the Lambda request's shape (a stubbed client:
the emulator cannot run Lambdas), routing by type, and ``--function`` loading."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.lambda_target import LambdaTarget
from magnetar_core.adapters.targets import LocalFunctions, Targets, WebhookTarget
from magnetar_core.domain.errors import InvalidMessage, NotFound
from magnetar_core.domain.triggers.records import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    TargetFailed,
    verify,
)
from magnetar_core.domain.triggers.spec import Target
from magnetar_local.triggers import load_function

BODY = b'{"records":[]}'


@pytest.fixture
def server() -> Iterator[tuple[str, list, list]]:
    """A webhook answering each POST with the next (status, body) of ``answers``;
    ``seen`` holds (headers, body) of each request."""
    seen: list = []
    answers: list = []
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            seen.append((dict(self.headers), self.rfile.read(int(self.headers["Content-Length"]))))
            status, body = answers.pop(0) if answers else (200, b"")
            if status is None:
                release.wait(5)  # never answers in time
                return
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/hook", seen, answers
    release.set()
    httpd.shutdown()
    httpd.server_close()


def test_the_webhook_posts_the_batch_signed_with_the_timestamp(server):
    url, seen, answers = server
    answers.append((200, b'{"batchItemFailures": []}'))
    answer = WebhookTarget(allow_private=True).invoke(
        Target("webhook", url=url, secret="k"), BODY, 1234
    )
    assert (answer.status, answer.body) == (200, b'{"batchItemFailures": []}')
    headers, body = seen[0]
    assert body == BODY and headers["Content-Type"] == "application/json"
    assert headers[TIMESTAMP_HEADER] == "1234"
    assert verify("k", 1234, BODY, headers[SIGNATURE_HEADER])


def test_the_webhook_connects_to_the_address_it_checked_without_a_second_lookup(server):
    """No DNS rebinding window: the name is resolved once, checked, and that very address is
    connected to (the name here resolves nowhere else: a second lookup would fail)."""
    url, seen, _ = server
    port = int(url.split(":")[2].split("/")[0])
    lookups = []

    def resolve(host, port_, *args):
        lookups.append(host)
        return [(2, 1, 6, "", ("127.0.0.1", port_))]

    target = Target("webhook", url=f"http://hook.invalid:{port}/hook?x=1", secret="k")
    answer = WebhookTarget(allow_private=True, resolve=resolve).invoke(target, BODY, 1)
    assert answer.status == 200 and lookups == ["hook.invalid"]
    assert seen[0][0]["Host"] == f"hook.invalid:{port}" and seen[0][1] == BODY

    def rebinding(host, port_, *args):  # the check sees a private address: refused, unsent
        return [(2, 1, 6, "", ("10.0.0.8", port_))]

    with pytest.raises(TargetFailed, match="private addresses"):
        WebhookTarget(resolve=rebinding).invoke(target, BODY, 1)
    assert len(seen) == 1


def test_a_non_2xx_answer_is_returned_and_no_answer_in_time_is_a_failure(server):
    url, _, answers = server
    answers.extend([(503, b"busy"), (None, b"")])
    target = Target("webhook", url=url, secret="k")
    assert WebhookTarget(allow_private=True).invoke(target, BODY, 1).status == 503
    with pytest.raises(TargetFailed, match="did not answer"):
        WebhookTarget(timeout_ms=200, allow_private=True).invoke(target, BODY, 1)


def test_an_unreachable_webhook_is_a_failure(server):
    url, _, _ = server
    closed = url.replace(url.split(":")[2].split("/")[0], "1")  # port 1: nothing listens
    with pytest.raises(TargetFailed):
        WebhookTarget(timeout_ms=1000, allow_private=True).invoke(
            Target("webhook", url=closed, secret="k"), BODY, 1
        )


def test_a_local_function_gets_the_event_and_its_return_is_the_answer():
    events = []
    functions = LocalFunctions({"ok": lambda event, context: events.append(event) or {"a": 1}})
    functions.register("boom", lambda event, context: 1 / 0)
    answer = functions.invoke(Target("lambda", function="ok"), BODY, 1)
    assert (answer.status, json.loads(answer.body), events) == (200, {"a": 1}, [{"records": []}])
    with pytest.raises(TargetFailed, match="ZeroDivisionError"):
        functions.invoke(Target("lambda", function="boom"), BODY, 1)
    with pytest.raises(TargetFailed, match="No local function"):
        functions.invoke(Target("lambda", function="none"), BODY, 1)


class StubLambda:
    def __init__(self, answer: dict) -> None:
        self.answer, self.calls = answer, []

    def invoke(self, **kwargs):
        self.calls.append(kwargs)
        return self.answer


def test_a_lambda_target_invokes_synchronously_with_the_batch_as_payload():
    client = StubLambda({"StatusCode": 200, "Payload": io.BytesIO(b'{"x": 1}')})
    answer = LambdaTarget(lambda: client).invoke(Target("lambda", function="fn"), BODY, 1)
    assert client.calls == [{"FunctionName": "fn", "InvocationType": "RequestResponse", "Payload": BODY}]  # fmt: skip
    assert (answer.status, answer.body) == (200, b'{"x": 1}')
    failing = StubLambda({"StatusCode": 200, "FunctionError": "Unhandled", "Payload": io.BytesIO(b"{}")})  # fmt: skip
    with pytest.raises(TargetFailed, match="Unhandled"):
        LambdaTarget(lambda: failing).invoke(Target("lambda", function="fn"), BODY, 1)


def test_targets_route_by_type_and_prefer_a_local_function_of_that_name():
    lambdas = StubLambda({"StatusCode": 200, "Payload": io.BytesIO(b"")})
    targets = Targets(functions=LocalFunctions({"local": lambda e, c: None}), lambdas=LambdaTarget(lambda: lambdas))  # fmt: skip
    assert targets.invoke(Target("lambda", function="local"), BODY, 1).status == 200
    assert lambdas.calls == []
    targets.invoke(Target("lambda", function="remote"), BODY, 1)
    assert [c["FunctionName"] for c in lambdas.calls] == ["remote"]
    with pytest.raises(TargetFailed, match="No Lambda client"):
        Targets().invoke(Target("lambda", function="remote"), BODY, 1)


def test_function_options_load_a_handler_from_a_file(tmp_path):
    (tmp_path / "fn.py").write_text("def handler(event, context):\n    return {'n': len(event['records'])}\n")  # fmt: skip
    name, handler = load_function(f"orders={tmp_path / 'fn.py'}:handler")
    assert name == "orders" and handler({"records": [1, 2]}, None) == {"n": 2}
    for bad in (
        "orders",
        f"orders={tmp_path / 'nope.py'}:handler",
        f"o={tmp_path / 'fn.py'}:other",
    ):
        with pytest.raises(ValueError, match="--function"):
            load_function(bad)


def test_magnetar_local_takes_repeated_functions_and_refuses_a_bad_one(tmp_path):
    from magnetar_local.main import _load_functions, build_parser

    (tmp_path / "fn.py").write_text("def a(event, context):\n    return None\n")
    args = build_parser().parse_args(["--function", f"one={tmp_path / 'fn.py'}:a", "--function", f"two={tmp_path / 'fn.py'}:a"])  # fmt: skip
    functions = _load_functions(args.function)
    assert "one" in functions and "two" in functions
    with pytest.raises(ValueError, match="NAME=path/to/file.py:handler"):
        _load_functions(["nothing-here"])


def _client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}}, "GetFunction")


class LookupLambda:
    """A Lambda client whose GetFunction raises ``error`` (None: the function exists)."""

    def __init__(self, error: Exception | None) -> None:
        self.error, self.looked_up = error, []

    def get_function(self, FunctionName):  # noqa: N803 (boto3's argument name)
        self.looked_up.append(FunctionName)
        if self.error is not None:
            raise self.error
        return {"Configuration": {"FunctionName": FunctionName}}


def test_a_lambda_target_is_looked_up_in_lambda_and_a_missing_function_is_not_found():
    present = LookupLambda(None)
    LambdaTarget(lambda: present).check(Target("lambda", function="orders-fn"))
    assert present.looked_up == ["orders-fn"]
    missing = LookupLambda(_client_error("ResourceNotFoundException"))
    with pytest.raises(NotFound, match="orders-fn does not exist"):
        LambdaTarget(lambda: missing).check(Target("lambda", function="orders-fn"))


def test_a_lambda_function_the_service_may_not_call_is_refused_and_a_throttled_lookup_passes(
    caplog,
):
    denied = LookupLambda(_client_error("AccessDeniedException"))
    with pytest.raises(InvalidMessage, match="target.function"):
        LambdaTarget(lambda: denied).check(Target("lambda", function="elsewhere"))
    throttled = LookupLambda(_client_error("TooManyRequestsException"))
    LambdaTarget(lambda: throttled).check(Target("lambda", function="busy"))
    assert "Could not check Lambda function busy" in caplog.text


def test_targets_check_only_lambda_targets_and_local_functions_need_no_lambda():
    targets = Targets(functions=LocalFunctions({"local": lambda e, c: None}))
    targets.check(Target("lambda", function="local"))
    targets.check(Target("webhook", url="https://hooks.example.com/x"))
    with pytest.raises(NotFound, match="--function remote="):
        targets.check(Target("lambda", function="remote"))
    lookup = LookupLambda(None)
    Targets(lambdas=LambdaTarget(lambda: lookup)).check(Target("lambda", function="remote"))
    assert lookup.looked_up == ["remote"]


def test_local_functions_announce_each_function_given_and_registered():
    announced: list[str] = []
    functions = LocalFunctions({"b": lambda e, c: None, "a": lambda e, c: None}, announced.append)
    functions.register("c", lambda e, c: None)
    assert announced == ["a", "b", "c"]
    assert sorted(functions.handlers()) == ["a", "b", "c"]
