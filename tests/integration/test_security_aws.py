"""Issue 12 on the emulator's AWS services: the authorizer Lambda (functions/authorizer) with
its key in an SSM SecureString and IAM tokens answered by STS, and short-lived presigned GETs
of large entries."""

from __future__ import annotations

import dataclasses
import sys
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from authorizer_events import DEMO_KEY, EXPECTED, event, names  # noqa: E402

import magnetar  # noqa: E402
from magnetar_core.api.authorizer import authorizer_from_env  # noqa: E402
from magnetar_core.domain.errors import MessageTooBig, TopicNotFound  # noqa: E402
from magnetar_core.engine import Engine  # noqa: E402
from magnetar_local.handlers import HandlerLoader  # noqa: E402
from magnetar_wire.token_keys import InvalidKey  # noqa: E402

pytestmark = pytest.mark.emulator


@pytest.fixture(scope="module")
def ssm(local_stack):
    """An SSM client on the emulator (made once: a boto3 client costs ~0.1 s or more)."""
    return local_stack.client("ssm")


@pytest.fixture
def key_parameter(ssm):
    """A fresh SecureString parameter holding the demo key; its name."""
    name = f"/it/token-key-{uuid.uuid4().hex[:8]}"
    ssm.put_parameter(Name=name, Value=DEMO_KEY, Type="SecureString")
    return name


def _auth_environment(local_stack, **changes: str) -> dict[str, str]:
    """The authorizer's environment as template.yaml sets it, with authentication on."""
    return {**local_stack.environment, "AUTHENTICATION_ENABLED": "true", **changes}


def test_the_authorizer_function_answers_every_sample_event_with_the_key_from_ssm(
    local_stack, ssm, key_parameter, monkeypatch
):
    for name, value in _auth_environment(local_stack, TOKEN_KEY_PARAMETER=key_parameter).items():
        monkeypatch.setenv(name, value)
    spec = local_stack.template.functions["AuthorizerFunction"]
    handler = HandlerLoader._load(spec)  # a cold start of functions/authorizer/app.py
    assert names() == sorted(EXPECTED)
    for name, expected in EXPECTED.items():
        assert handler(event(name), None) == expected, name
    ssm.delete_parameter(Name=key_parameter)
    assert handler(event("token_valid"), None)["isAuthorized"] is True  # read once, kept


def test_a_missing_parameter_fails_the_invocation_naming_the_parameter(local_stack, ssm):
    environment = _auth_environment(local_stack, TOKEN_KEY_PARAMETER="/it/missing")
    authorize = authorizer_from_env(environment, ssm=ssm)
    with pytest.raises(InvalidKey, match="'/it/missing'.*ParameterNotFound"):
        authorize(event("token_valid"))


def test_an_iam_token_from_the_sdk_is_admitted_as_the_principal_sts_names(local_stack):
    sdk = magnetar.AuthenticationAws(endpoint_url=local_stack.aws_endpoint_url)
    authorize = authorizer_from_env(_auth_environment(local_stack))
    answer = authorize(event("token_valid", sdk._headers()["Authorization"]))
    # moto's STS answers its default identity for a presigned call
    assert answer == {
        "isAuthorized": True,
        "context": {"role": "arn:aws:sts::123456789012:user/moto"},
    }


def test_a_large_entry_comes_as_a_presigned_get_valid_for_the_configured_seconds(
    settings, engine_clients, topic, make_entry
):
    small_inline = dataclasses.replace(
        settings, inline_entry_max_bytes=8, download_url_expiry_s=60, index_inline_max_bytes=0
    )  # the entry in an S3 object (not in its index item), too large for the response
    engine = Engine.build(small_inline, clients=engine_clients)
    entry = make_entry(b"a large entry, for this test")
    engine.producer.publish(topic, entry)
    subs = engine.subscriptions
    consumer = subs.subscribe(topic, "s", None, "Shared", earliest=True).consumer_id
    (delivered,) = subs.receive(topic, "s", consumer, 10, 0, by_reference=True)
    assert delivered.data is None and delivered.url is not None
    query = parse_qs(urlsplit(delivered.url).query)
    assert query["X-Amz-Expires"] == ["60"]
    assert requests.get(delivered.url, timeout=10).content == entry


def test_an_upload_above_the_maximum_size_is_refused_without_loading_it_whole(
    settings, engine_clients, topic, make_entry
):
    engine = Engine.build(dataclasses.replace(settings, max_message_size_bytes=1024),
                          clients=engine_clients)  # fmt: skip
    upload = engine.producer.new_upload(topic, 60)
    oversized = make_entry(b"x" * 4096)
    assert requests.put(upload.url, data=oversized, timeout=10).status_code == 200
    ranges: list[str | None] = []
    s3 = engine_clients[1]

    def capture(params, **_):
        ranges.append(params.get("Range"))

    s3.meta.events.register("before-parameter-build.s3.GetObject", capture)
    try:
        with pytest.raises(MessageTooBig, match="1024 bytes"):
            engine.producer.publish(topic, entry_ref=upload.entry_ref)
    finally:
        s3.meta.events.unregister("before-parameter-build.s3.GetObject", capture)
    assert ranges == ["bytes=0-1024"]  # at most max + 1 bytes read
    with pytest.raises(TopicNotFound):  # refused before the topic was even created
        engine.topics.get(topic)
