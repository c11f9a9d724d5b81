"""A handler that dies mid-request (``InvocationAbandoned``, as fault injection raises it)
ends as a timed-out or crashed Lambda does: API Gateway's 504, and its container is gone."""

from __future__ import annotations

import json
from pathlib import Path

from magnetar_local.events import HttpRequest
from magnetar_local.gateway import Gateway
from magnetar_local.handlers import HandlerLoader, InvocationAbandoned
from magnetar_local.template import FunctionSpec


def test_an_abandoned_invocation_is_answered_504_endpoint_request_timed_out():
    gateway = Gateway([], {})

    def dies(event, context):
        raise InvocationAbandoned("injected")

    gateway.add_route("POST", "/x", dies)
    response = gateway.invoke(HttpRequest("POST", "/x", "", [], b"", "127.0.0.1", "HTTP/1.1"))
    assert response.status == 504
    assert json.loads(response.body) == {"message": "Endpoint request timed out"}


def test_the_container_of_an_abandoned_invocation_is_not_reused(tmp_path: Path):
    (tmp_path / "app.py").write_text(
        "import os\nCONTAINER = os.urandom(4).hex()\n"
        "def lambda_handler(event, context):\n    return CONTAINER\n"
    )
    spec = FunctionSpec("F", "f", code_dir=tmp_path, handler="app.lambda_handler", timeout_s=3,
                        memory_mb=128)  # fmt: skip
    loader = HandlerLoader({"F": spec})
    with loader.lease("F") as handler:
        first = handler({}, None)
    try:
        with loader.lease("F") as handler:
            assert handler({}, None) == first  # the idle container was reused
            raise InvocationAbandoned("dies")
    except InvocationAbandoned:
        pass
    with loader.lease("F") as handler:
        assert handler({}, None) != first  # a cold start
