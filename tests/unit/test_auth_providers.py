"""Pulsar's other authentication providers on the service: Basic (an htpasswd file of
bcrypt, apr1 and crypt entries), client certificates (the CN is the role) and the anonymous
role (exactly its grants), in the guard, the authorizer and over HTTP on a MemoryService."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from auth_support import SECRET, bearer, secret_reference, snapshot
from auth_test_service import APR1_PASSWORD, APR1_USER, BASIC_PASSWORD, BASIC_USER, write_files
from passlib.hash import des_crypt

from magnetar_core.api.authorizer import RequestAuthorizer
from magnetar_core.api.guard import role_of
from magnetar_core.domain.security import AuthAction, NamespacePermissions, Role
from magnetar_core.engine.options import providers_of
from magnetar_core.services.authentication import Authenticator, KeySource
from magnetar_core.services.basic_auth import (
    UNKNOWN,
    BadCredentials,
    BasicUsers,
    HtpasswdSource,
    parse_htpasswd,
)
from magnetar_core.services.credentials import BadCertificate, Providers, certificate_role
from magnetar_local.memory_service import MemoryService, memory_settings
from magnetar_wire.token_keys import InvalidKey
from magnetar_wire.tokens import MalformedToken, MissingToken, VerificationKeys

NOW_S = 1_800_000_000
KEYS = VerificationKeys.of(SECRET)
MESSAGES = "/v1/persistent/public/default/t/messages"
OTHER_MESSAGES = "/v1/persistent/public/other/t/messages"
BODY = {"messages": [{"payload": "aGk="}]}


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory):
    return write_files(tmp_path_factory.mktemp("auth-files"))


@pytest.fixture(scope="module")
def users(files) -> BasicUsers:
    return BasicUsers(parse_htpasswd(files.htpasswd.read_text()))


def _event(headers: dict[str, str] | None = None, cert_pem: str | None = None) -> dict:
    context: dict = {"requestId": "r"}
    if cert_pem is not None:
        context["authentication"] = {"clientCert": {"clientCertPem": cert_pem}}
    return {"headers": headers or {}, "requestContext": context}


def test_bcrypt_apr1_and_crypt_entries_prove_their_users_with_the_right_password(users):
    crypt_users = BasicUsers({"old": des_crypt.hash("pw")})
    assert users.role_of(basic(BASIC_USER, BASIC_PASSWORD)) == Role(BASIC_USER)
    assert users.role_of(basic(APR1_USER, APR1_PASSWORD)) == Role(APR1_USER)
    assert crypt_users.role_of(basic("old", "pw")) == Role("old")


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (basic(BASIC_USER, "wrong"), UNKNOWN),
        (basic("nobody", BASIC_PASSWORD), UNKNOWN),
        (basic(APR1_USER, BASIC_PASSWORD), UNKNOWN),
        ("Basic !!!not-base64", "not base64"),
        ("Basic " + base64.b64encode(b"no-colon").decode(), "userId:password"),
        ("Basic", "Basic base64"),
    ],
    ids=[
        "wrong-password",
        "unknown-user",
        "other-users-password",
        "not-base64",
        "no-colon",
        "empty",
    ],  # fmt: skip
)
def test_wrong_or_malformed_basic_credentials_are_a_401_with_pulsars_wording(users, header, message):  # fmt: skip
    with pytest.raises(BadCredentials, match=message) as refused:
        users.role_of(header)
    assert refused.value.status == 401
    assert refused.value.code == "AuthenticationError"


def test_a_checked_header_is_remembered_for_a_while_and_checked_again_after(files):
    now = [0.0]
    users = BasicUsers(parse_htpasswd(files.htpasswd.read_text()), 60, lambda: now[0])
    header = basic(BASIC_USER, BASIC_PASSWORD)
    assert users.role_of(header) == Role(BASIC_USER)
    users._users.clear()  # the file changed: the remembered answer stands until it expires
    assert users.role_of(header) == Role(BASIC_USER)
    now[0] = 61.0
    with pytest.raises(BadCredentials, match=UNKNOWN):
        users.role_of(header)


def test_an_htpasswd_line_without_a_known_hash_is_refused_naming_the_line():
    with pytest.raises(InvalidKey, match="line 2"):
        parse_htpasswd("# comment\nuser:plaintext\n")
    assert parse_htpasswd("\n# c\n") == {}


def test_the_htpasswd_file_is_read_once_from_a_file_reference_or_a_named_secret(files):
    text = files.htpasswd.read_text()
    reads: list[str] = []

    class Secrets:
        def read(self, name: str) -> str:
            reads.append(name)
            return text

    from_file = HtpasswdSource(files.htpasswd.as_uri())
    from_secret = HtpasswdSource(secret="/aws/reference/secretsmanager/users", secrets=Secrets())
    for source in (from_file, from_secret, from_secret):
        assert source.role_of(basic(BASIC_USER, BASIC_PASSWORD)) == Role(BASIC_USER)
    assert reads == ["/aws/reference/secretsmanager/users"]
    with pytest.raises(InvalidKey, match="no secret store"):
        HtpasswdSource(secret="s").users()


def test_a_client_certificates_cn_is_the_role_and_a_bad_pem_is_a_401(files):
    assert certificate_role(files.client_cert.read_text()) == Role("tls-principal")
    with pytest.raises(BadCertificate) as refused:
        certificate_role("-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n")
    assert refused.value.status == 401


def test_the_guard_picks_the_provider_by_the_credentials_the_request_carries(files):
    pem = files.client_cert.read_text()
    providers = Providers(HtpasswdSource(files.htpasswd.as_uri()), tls=True,
                          anonymous=Role("anonymous"))  # fmt: skip
    token_header = bearer("app")["Authorization"]
    cases = {
        "token": (_event({"authorization": token_header}, pem), Role("app")),
        "basic": (_event({"authorization": basic(BASIC_USER, BASIC_PASSWORD)}), Role(BASIC_USER)),
        "certificate": (_event({}, pem), Role("tls-principal")),
        "nothing": (_event({}), Role("anonymous")),
    }
    for name, (event, expected) in cases.items():
        assert role_of(event, KEYS, NOW_S, providers) == expected, name
    # credentials that fail are refused, never taken as the anonymous role
    with pytest.raises(BadCredentials):
        role_of(_event({"authorization": basic(BASIC_USER, "x")}), KEYS, NOW_S, providers)
    with pytest.raises(MalformedToken):
        role_of(_event({"authorization": "Bearer junk"}), KEYS, NOW_S, providers)


def test_without_the_providers_a_certificate_or_nothing_is_still_a_missing_token(files):
    pem = files.client_cert.read_text()
    for event in (_event({}, pem), _event({})):
        with pytest.raises(MissingToken):
            role_of(event, KEYS, NOW_S, Providers())


def test_the_authorizer_admits_basic_users_certificates_and_the_anonymous_role(files):
    settings = memory_settings(
        authentication_enabled=True,
        token_secret_key=secret_reference(),
        basic_auth_htpasswd=files.htpasswd.as_uri(),
        tls_client_authentication=True,
        anonymous_user_role="anonymous",
    )
    keys = KeySource(settings.token_secret_key)
    authorize = RequestAuthorizer(
        Authenticator(keys, None, "magnetar", providers=providers_of(settings)), True,
        clock_s=lambda: NOW_S,
    )  # fmt: skip
    pem = files.client_cert.read_text()
    answers = [
        authorize(_event({"authorization": basic(BASIC_USER, BASIC_PASSWORD)})),
        authorize(_event({}, pem)),
        authorize(_event({})),
        authorize(_event({"authorization": basic(BASIC_USER, "wrong")})),
    ]
    assert [a.get("context", {}).get("role") for a in answers] == [
        BASIC_USER, "tls-principal", "anonymous", None]  # fmt: skip
    assert answers[3] == {"isAuthorized": False}


@contextmanager
def provider_service(files, **changes) -> Iterator[MemoryService]:
    """A MemoryService with authentication on, Basic users, the anonymous role
    ``anonymous`` allowed to produce on public/default, and ``changes``."""
    settings = memory_settings(
        authentication_enabled=True,
        superuser_roles=("admin",),
        token_secret_key=secret_reference(),
        authorization_cache_ms=0,
        basic_auth_htpasswd=files.htpasswd.as_uri(),
        anonymous_user_role="anonymous",
        **changes,
    )
    with MemoryService(settings) as svc:
        permissions = NamespacePermissions().grant(Role("anonymous"), [AuthAction("produce")])
        permissions = permissions.grant(Role(BASIC_USER), [AuthAction("produce")])
        svc.stores.permissions.put("public/default", permissions)
        yield svc


def test_over_http_basic_users_produce_and_wrong_passwords_are_401_json(files):
    with provider_service(files) as svc:
        ok = requests.post(svc.url + MESSAGES, json=BODY, timeout=5,
                           headers={"Authorization": basic(BASIC_USER, BASIC_PASSWORD)})  # fmt: skip
        assert ok.status_code == 200, ok.text
        before = snapshot(svc)
        for header in (basic(BASIC_USER, "wrong"), basic("nobody", "x"), "Basic %%%"):
            refused = requests.post(svc.url + MESSAGES, json=BODY, timeout=5,
                                    headers={"Authorization": header})  # fmt: skip
            assert refused.status_code == 401, refused.text
            assert refused.json()["error"] == "AuthenticationError"
        assert refused.json()["message"] == "the Basic credentials are not base64 of UTF-8 text"
        assert snapshot(svc) == before == {"persistent://public/default/t": (1, [])}


def test_over_http_the_anonymous_role_gets_exactly_its_grants_and_403_beyond(files):
    with provider_service(files) as svc:
        svc.create_namespaces("public/other")  # exists: a refusal there is about grants
        ok = requests.post(svc.url + MESSAGES, json=BODY, timeout=5)
        assert ok.status_code == 200, ok.text
        before = snapshot(svc)
        refusals = [
            requests.post(svc.url + OTHER_MESSAGES, json=BODY, timeout=5),
            requests.get(svc.url + "/admin/v2/tenants", timeout=5),
            requests.put(svc.url + "/admin/v2/tenants/mine", json={}, timeout=5),
        ]
        for refused in refusals:
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == "AuthorizationError"
            assert "Role 'anonymous'" in refused.json()["message"]
        assert snapshot(svc) == before


def test_the_providers_are_read_from_settings_once(tmp_path: Path, files):
    providers = providers_of(memory_settings(
        basic_auth_htpasswd=files.htpasswd.as_uri(), tls_client_authentication=True,
        anonymous_user_role="guest"))  # fmt: skip
    assert (providers.tls, providers.anonymous) == (True, Role("guest"))
    assert providers.basic is not None
    assert providers_of(memory_settings()) == Providers()
