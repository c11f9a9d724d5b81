"""``magnetar triggers``' definitions from flags and ``--body`` (no service: the request is
built and checked before anything is sent), and ``magnetar invoke`` as one HTTP call that
needs no service package."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from magnetar.cli import main as cli
from magnetar.cli.triggers import definition, parser


def _args(*words: str):
    return parser().parse_args(["create", "persistent://public/default/t", "push", *words])


def test_the_flags_make_the_http_apis_trigger_definition():
    body = definition(_args("--webhook", "https://hooks.example.com/x", "--secret", "k",
                            "--subscription-type", "Key_Shared", "--batching-window-ms", "200",
                            "--concurrency", "4", "--retry-min-ms", "500", "--retry-max-ms", "2000",
                            "--max-redeliver-count", "2", "--dead-letter-topic", "dlq",
                            "--filter", '{"key": [{"prefix": "eu-"}]}'))  # fmt: skip
    assert body == {
        "target": {"type": "webhook", "url": "https://hooks.example.com/x", "secret": "k"},
        "subscriptionType": "Key_Shared", "maximumBatchingWindowMs": 200, "maximumConcurrency": 4,
        "retry": {"minDelayMs": 500, "maxDelayMs": 2000},
        "deadLetterPolicy": {"maxRedeliverCount": 2, "deadLetterTopic": "dlq"},
        "filter": {"key": [{"prefix": "eu-"}]},
    }  # fmt: skip


def test_a_body_file_is_the_definition_and_flags_override_its_fields(tmp_path):
    path = tmp_path / "trigger.json"
    path.write_text(json.dumps({"target": {"type": "lambda", "function": "a"}, "batchSize": 3}))
    assert definition(_args("--body", str(path), "--batch-size", "9")) == {
        "target": {"type": "lambda", "function": "a"}, "batchSize": 9,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ((), "a trigger needs a target"),
        (("--lambda", "f", "--secret", "k"), "--secret is the webhook's"),
        (("--lambda", "f", "--dead-letter-topic", "d"), "--dead-letter-topic needs"),
        (("--lambda", "f", "--filter", "{eu"), "--filter is not JSON"),
        (("--body", "/nonexistent/t.json"), "--body /nonexistent/t.json"),
    ],
)
def test_a_bad_definition_is_a_usage_error_and_nothing_is_sent(words, said, capsys):
    status = cli.main(["triggers", "--service-url", "http://127.0.0.1:9", "create",
                       "persistent://public/default/t", "push", *words])  # fmt: skip
    assert status == 2 and said in capsys.readouterr().err


@pytest.fixture
def lambda_api() -> Iterator[tuple[str, list]]:
    """A Lambda Invoke API answering ``{"ok": true}``; yields its URL and the requests."""
    seen: list = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.headers["X-Amz-Invocation-Type"], json.loads(body)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"ok": true}')

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


class _NotInstalled:
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "magnetar_local" or fullname.startswith("magnetar_local."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def test_magnetar_invoke_is_one_http_call_and_needs_no_service_package(
    lambda_api, tmp_path, capsys, monkeypatch
):
    url, seen = lambda_api
    for name in [n for n in sys.modules if n.startswith("magnetar_local")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NotInstalled(), *sys.meta_path])
    event = tmp_path / "event.json"
    event.write_text('{"source": "orders"}')
    assert cli.main(["invoke", "IngestFunction", "--event", str(event), "--service-url", url]) == 0
    assert capsys.readouterr().out == '{"ok": true}\n'
    assert seen == [("/2015-03-31/functions/IngestFunction/invocations", "RequestResponse",
                     {"source": "orders"})]  # fmt: skip
