"""The HTTP edge with authentication on: every request's role (authorizer context, else a
Bearer token), 401 before 403 before the handler, nothing changed on a refusal; off: as
before (no role, everything allowed)."""

from __future__ import annotations

import pytest
import requests
from auth_support import OTHER_SECRET, SECRET, auth_service, bearer, snapshot, tampered, token

from magnetar_core.api.guard import role_of, route_template
from magnetar_core.domain.security import Role
from magnetar_local.memory_service import MemoryService
from magnetar_wire.tokens import (
    BadSignature,
    MalformedToken,
    MissingToken,
    TokenExpired,
    VerificationKeys,
)

KEYS = VerificationKeys.of(SECRET)
NOW_S = 1_800_000_000
MESSAGES = "/v1/persistent/public/default/t/messages"
BODY = {"messages": [{"payload": "aGk="}]}


def _event(headers: dict[str, str] | None = None, authorizer: dict | None = None) -> dict:
    context: dict = {"requestId": "r"}
    if authorizer is not None:
        context["authorizer"] = authorizer
    return {"headers": headers or {}, "requestContext": context}


def test_the_role_is_the_tokens_subject_when_the_signature_verifies():
    event = _event({"authorization": f"Bearer {token('app')}"})
    assert role_of(event, KEYS, NOW_S) == Role("app")


def test_the_gateway_authorizers_role_wins_over_any_header():
    lambda_event = _event({"authorization": "Bearer junk"}, {"lambda": {"role": "billing"}})
    iam_arn = "arn:aws:iam::123456789012:role/worker"
    iam_event = _event({}, {"iam": {"userArn": iam_arn}})
    assert role_of(lambda_event, KEYS, NOW_S) == Role("billing")
    assert role_of(iam_event, None, NOW_S) == Role(iam_arn)


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({}, MissingToken),
        ({"authorization": "Basic dXNlcjpwdw=="}, MalformedToken),
        ({"authorization": "Bearer not-a-jwt"}, MalformedToken),
        ({"authorization": f"Bearer {token('app', OTHER_SECRET)}"}, BadSignature),
        ({"authorization": f"Bearer {tampered('app', 'admin')}"}, BadSignature),
        ({"authorization": f"Bearer {token('app', expires_at_s=NOW_S)}"}, TokenExpired),
    ],
    ids=["missing", "basic", "garbage", "wrong-key", "tampered", "expired"],
)
def test_a_request_without_a_valid_token_proves_no_role(headers, error):
    with pytest.raises(error) as refused:
        role_of(_event(headers), KEYS, NOW_S)
    assert refused.value.status == 401


def test_without_keys_a_token_cannot_verify_and_the_message_says_what_to_configure():
    with pytest.raises(BadSignature, match="TOKEN_SECRET_KEY"):
        role_of(_event({"authorization": f"Bearer {token('app')}"}), None, NOW_S)
    with pytest.raises(MissingToken):
        role_of(_event({}), None, NOW_S)


def test_resolver_routes_become_the_gateways_route_templates():
    rule = "/v1/<domain>/<tenant>/<namespace>/<topic>/producers/<producer_name>/heartbeat"
    assert route_template(rule) == (
        "/v1/{domain}/{tenant}/{namespace}/{topic}/producers/{producerName}/heartbeat"
    )


def test_401_comes_before_any_handler_and_changes_nothing():
    with auth_service() as svc:
        before = snapshot(svc)
        answer = requests.post(svc.url + MESSAGES, json=BODY, timeout=5)
        assert answer.status_code == 401
        assert answer.json()["error"] == "AuthenticationError"
        assert "Authorization: Bearer" in answer.json()["message"]
        assert snapshot(svc) == before == {}


def test_403_names_the_role_and_the_missing_permission_and_changes_nothing():
    with auth_service(reader=["consume"]) as svc:
        answer = requests.post(svc.url + MESSAGES, json=BODY, headers=bearer("reader"), timeout=5)
        assert answer.status_code == 403
        assert answer.json()["error"] == "AuthorizationError"
        assert (
            "Role 'reader' is not authorized to produce to persistent://public/default/t"
            in (answer.json()["message"])
        )
        assert snapshot(svc) == {}


@pytest.mark.parametrize(
    "namespace",
    ["tenant/ns", "public/missing"],
    ids=["no such tenant", "no such namespace in an existing tenant"],
)
def test_a_denied_role_producing_into_a_namespace_that_does_not_exist_gets_topic_not_found(
    namespace,
):
    # Pulsar's broker finds the topic's namespace before it authorizes the lookup
    with auth_service(reader=["consume"]) as svc:
        url = f"{svc.url}/v1/persistent/{namespace}/t/messages"
        answer = requests.post(url, json=BODY, headers=bearer("reader"), timeout=5)
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"] == "TopicNotFound"
        assert "Namespace does not exist" in answer.json()["message"]
        # an existing namespace without grants stays a 403
        answer = requests.post(svc.url + MESSAGES, json=BODY, headers=bearer("reader"), timeout=5)
        assert (answer.status_code, answer.json()["error"]) == (403, "AuthorizationError")
        assert snapshot(svc) == {}


def test_a_granted_role_produces_and_a_superuser_reads_the_result():
    with auth_service(writer=["produce"]) as svc:
        answer = requests.post(svc.url + MESSAGES, json=BODY, headers=bearer("writer"), timeout=5)
        assert answer.status_code == 200, answer.text
        assert snapshot(svc) == {"persistent://public/default/t": (1, [])}


def test_with_authentication_off_a_request_without_a_token_is_served_as_before():
    with MemoryService() as svc:
        answer = requests.post(svc.url + MESSAGES, json=BODY, timeout=5)
        assert answer.status_code == 200, answer.text


def test_an_admin_path_nobody_serves_is_a_404_for_any_caller_while_served_ones_still_need_a_token():
    # ANY /admin/{proxy+} sends every unserved admin path to the admin app: its 404 tells
    # nothing; a served path under another method is its 405 naming the methods it takes
    with auth_service(reader=["consume"]) as svc:
        for headers in ({}, bearer("reader"), {"authorization": "Bearer not-a-jwt"}):
            answer = requests.patch(
                svc.url + "/admin/v2/brokers/wealth", headers=headers, timeout=5
            )
            assert answer.status_code == 404, answer.text
            assert answer.json() == {"error": "NotFound",
                                     "message": "No route for PATCH /admin/v2/brokers/wealth"}  # fmt: skip
            answer = requests.patch(
                svc.url + "/admin/v2/brokers/health", headers=headers, timeout=5
            )
            assert (answer.status_code, answer.headers["Allow"]) == (405, "GET"), answer.text
        assert requests.get(svc.url + "/admin/v2/brokers/health", timeout=5).status_code == 401
        assert snapshot(svc) == {}
