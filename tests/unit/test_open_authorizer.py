"""API Gateway's authorizer step without identity source (template.yaml's OpenAuthorizer:
an anonymous role or client certificates), run by the local gateway with the real
authorizer: requests without an Authorization header reach it and run as the anonymous
role, nothing is cached; with the header as identity source they get API Gateway's 401."""

from __future__ import annotations

import pytest
import requests
from auth_support import bearer, snapshot
from test_auth_providers import BODY, MESSAGES, files, provider_service  # noqa: F401

from magnetar_core.api.authorizer import RequestAuthorizer
from magnetar_core.engine.options import providers_of
from magnetar_core.services.authentication import Authenticator, KeySource


def _authorizer(svc) -> RequestAuthorizer:
    """The authorizer function's logic on the service's settings (its key, its providers)."""
    settings = svc.settings
    authenticator = Authenticator(KeySource(settings.token_secret_key), None, "magnetar",
                                  providers=providers_of(settings))  # fmt: skip
    return RequestAuthorizer(authenticator, True)


@pytest.fixture
def open_gateway(files):  # noqa: F811 - the module fixture imported above
    with provider_service(files) as svc:
        authorize = _authorizer(svc)
        step = svc.gateway.use_authorizer(handler=lambda event, _: authorize(event),
                                          identity_source=False)  # fmt: skip
        yield svc, step


def test_without_identity_source_a_request_without_credentials_runs_as_the_anonymous_role(
    open_gateway,
):
    svc, step = open_gateway
    for _ in range(2):
        answer = requests.post(svc.url + MESSAGES, json=BODY, timeout=5)
        assert answer.status_code == 200, answer.text
    assert step.invocations == 2  # no cache: the authorizer answered each request
    assert snapshot(svc) == {"persistent://public/default/t": (2, [])}


def test_without_identity_source_bad_credentials_are_still_refused_by_the_authorizer(
    open_gateway,
):
    svc, step = open_gateway
    answer = requests.post(svc.url + MESSAGES, json=BODY, headers={"authorization": "Bearer junk"},
                           timeout=5)  # fmt: skip
    assert (answer.status_code, answer.json()) == (403, {"message": "Forbidden"})
    assert step.invocations == 1
    assert snapshot(svc) == {}


def test_with_the_header_as_identity_source_a_request_without_it_never_reaches_the_authorizer(
    files,  # noqa: F811
):
    with provider_service(files) as svc:
        authorize = _authorizer(svc)
        step = svc.gateway.use_authorizer(handler=lambda event, _: authorize(event))
        answer = requests.post(svc.url + MESSAGES, json=BODY, timeout=5)
        assert (answer.status_code, answer.json()) == (401, {"message": "Unauthorized"})
        assert step.invocations == 0
        granted = requests.post(svc.url + MESSAGES, json=BODY, headers=bearer("admin"), timeout=5)
        assert granted.status_code == 200, granted.text
        assert step.invocations == 1
