"""OAuth 2.0 client credentials: the service verifies an issuer's access tokens with its JWKS
(``services.oauth2``), the guard sends the issuer's tokens there and Pulsar's own tokens to
the token check, and the SDK's ``AuthenticationOauth2`` fetches, keeps and refreshes tokens
from the issuer's token endpoint (a local test issuer)."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pytest
from auth_support import SECRET, bearer
from cryptography.hazmat.primitives.asymmetric import rsa
from oauth2_issuer import Issuer

import magnetar as pulsar
from magnetar_core.adapters.http.jwks import jwks_fetcher
from magnetar_core.api.guard import role_of
from magnetar_core.domain.security import Role
from magnetar_core.services.credentials import Providers
from magnetar_core.services.oauth2 import OAuth2Tokens
from magnetar_wire.token_keys import InvalidKey
from magnetar_wire.tokens import BadSignature, MalformedToken, TokenExpired, VerificationKeys

CLIENT, CLIENT_SECRET = "oauth2-principal", "client-secret"
AUDIENCE = "urn:magnetar:test"


@pytest.fixture(scope="module")
def issuer():
    running = Issuer({CLIENT: CLIENT_SECRET}).start()
    yield running
    running.stop()


def _tokens(issuer: Issuer, audience: str | None = AUDIENCE, fetches: list | None = None) -> OAuth2Tokens:  # fmt: skip
    def fetch():
        if fetches is not None:
            fetches.append(1)
        return issuer.jwks()

    return OAuth2Tokens(issuer.url, fetch, audience)


def test_an_access_token_of_the_issuer_proves_its_sub_and_the_jwks_is_read_once(issuer):
    fetches: list[int] = []
    tokens = _tokens(issuer, fetches=fetches)
    now = int(time.time())
    for _ in range(3):
        assert tokens.role_of(issuer.token(CLIENT, AUDIENCE), now) == Role(CLIENT)
    assert fetches == [1]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda i: i.token(CLIENT, AUDIENCE, expires_in_s=-10), TokenExpired, "expired"),
        (lambda i: i.token(CLIENT, "urn:other"), BadSignature, "audience"),
        (
            lambda i: i.token(CLIENT, AUDIENCE, issuer="https://elsewhere"),
            BadSignature,
            "not from",
        ),  # fmt: skip
        (
            lambda i: i.token(
                CLIENT, AUDIENCE, key=rsa.generate_private_key(public_exponent=65537, key_size=2048)
            ),  # fmt: skip
            BadSignature,
            "signature",
        ),
        (
            lambda i: jwt.encode(
                {"iss": i.url, "sub": "x", "exp": 2**40}, "k" * 32, algorithm="HS256"
            ),  # fmt: skip
            BadSignature,
            "algorithm",
        ),
        (
            lambda i: i.token(CLIENT, AUDIENCE, token_use="id"),
            MalformedToken,
            "not an access token",
        ),  # fmt: skip
        (lambda i: "not.a.jwt", MalformedToken, "cannot be read"),
    ],
    ids=["expired", "other-audience", "other-issuer", "other-key", "hs256", "id-token", "garbage"],
)
def test_a_token_the_issuers_keys_do_not_vouch_for_is_a_401(issuer, make, error, message):
    with pytest.raises(error, match=message) as refused:
        _tokens(issuer).role_of(make(issuer), int(time.time()))
    assert refused.value.status == 401


def test_an_unknown_key_id_reads_the_jwks_again_at_most_once_a_minute_for_rotated_keys(issuer):
    fetches: list[int] = []
    clock = [0.0]

    def fetch():
        fetches.append(1)
        return issuer.jwks()

    tokens = OAuth2Tokens(issuer.url, fetch, clock_s=lambda: clock[0])
    rotated = jwt.encode({"iss": issuer.url, "sub": CLIENT, "exp": 2**40}, issuer.key,
                         algorithm="RS256", headers={"kid": "rotated"})  # fmt: skip
    for advance in (0.0, 61.0, 1.0):
        clock[0] += advance
        with pytest.raises(BadSignature, match="no key 'rotated'"):
            tokens.role_of(rotated, int(time.time()))
    assert fetches == [1, 1]  # the first read, one more a minute later, none a second after


def test_an_unreadable_jwks_is_a_deployment_fault_not_a_401(tmp_path, issuer):
    broken = tmp_path / "jwks.json"
    broken.write_text("{}")
    tokens = OAuth2Tokens(issuer.url, jwks_fetcher(broken.as_uri()))
    with pytest.raises(InvalidKey, match="JWKS"):
        tokens.role_of(issuer.token(CLIENT), int(time.time()))
    with pytest.raises(ValueError, match="https:// or file://"):
        jwks_fetcher("ftp://x/jwks")


def test_the_jwks_is_fetched_from_the_issuers_url_or_a_file(issuer, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(issuer.jwks()))
    for location in (issuer.url + "/.well-known/jwks.json", path.as_uri()):
        assert jwks_fetcher(location)()["keys"][0]["kid"] == "test-key-1"


def test_the_guard_sends_the_issuers_tokens_to_oauth2_and_pulsar_tokens_to_the_keys(issuer):
    providers = Providers(oauth2=_tokens(issuer, audience=None))
    keys, now = VerificationKeys.of(SECRET), int(time.time())

    def event(header: str) -> dict:
        return {"headers": {"authorization": header}, "requestContext": {}}

    assert role_of(event(f"Bearer {issuer.token(CLIENT)}"), keys, now, providers) == Role(CLIENT)
    assert role_of(event(bearer("app")["Authorization"]), keys, now, providers) == Role("app")


def _auth(issuer: Issuer, tmp_path, secret: str = CLIENT_SECRET) -> pulsar.AuthenticationOauth2:
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({"client_id": CLIENT, "client_secret": secret}))
    params = {"issuer_url": issuer.url, "private_key": credentials.as_uri(), "audience": AUDIENCE}
    return pulsar.AuthenticationOauth2(json.dumps(params))


def test_the_sdk_fetches_a_token_once_and_again_when_it_is_due(issuer, tmp_path):
    auth = _auth(issuer, tmp_path)
    before = issuer.token_requests
    first, second = auth._headers(), auth._headers()
    assert first == second and issuer.token_requests == before + 1
    token = first["Authorization"].removeprefix("Bearer ")
    assert _tokens(issuer).role_of(token, int(time.time())) == Role(CLIENT)
    issuer.expires_in_s = 0  # due at once: every request fetches a new token
    try:
        auth._token = None
        auth._headers(), auth._headers()
        assert issuer.token_requests == before + 3
    finally:
        issuer.expires_in_s = 3600


def test_the_sdk_reads_credentials_from_a_data_url_and_reports_a_refused_client(issuer, tmp_path):
    data = base64.b64encode(json.dumps({"client_id": CLIENT, "client_secret": CLIENT_SECRET}).encode()).decode()  # fmt: skip
    params = {"issuer_url": issuer.url, "private_key": f"data:application/json;base64,{data}"}
    assert pulsar.AuthenticationOauth2(json.dumps(params))._headers()["Authorization"].startswith("Bearer ")  # fmt: skip
    with pytest.raises(pulsar.ErrorGettingAuthenticationData, match="401"):
        _auth(issuer, tmp_path, secret="wrong")._headers()
    with pytest.raises(pulsar.ErrorGettingAuthenticationData, match="credentials"):
        pulsar.AuthenticationOauth2(json.dumps({"issuer_url": issuer.url, "private_key": "/nope"}))._headers()  # fmt: skip


def test_the_sdk_checks_the_parameters_as_pulsar_client_does():
    with pytest.raises(ValueError, match="Argument auth_params_string is expected"):
        pulsar.AuthenticationOauth2({"issuer_url": "x"})  # type: ignore[arg-type]
    for text in ("not json", "[]", '{"issuer_url": "https://i"}'):
        with pytest.raises(ValueError, match="auth_params_string"):
            pulsar.AuthenticationOauth2(text)
