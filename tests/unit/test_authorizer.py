"""The Lambda authorizer and the authentication service on in-memory adapters: which tokens
are admitted with which role, the key read once per container, every denial a simple
``isAuthorized: false`` whose reason is logged."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging

import pytest
from authorizer_events import DEMO_KEY, EXPECTED, event, names

from magnetar_core.adapters.memory.credentials import CallerIdentity, SecretParameters
from magnetar_core.api.authorizer import RequestAuthorizer, authorization_header
from magnetar_core.services.authentication import Authenticator, KeySource, keys_of_parameter
from magnetar_wire.iam_tokens import AUDIENCE_HEADER, encode_iam_token
from magnetar_wire.token_keys import InvalidKey, new_key_pair
from magnetar_wire.tokens import BadSignature, MalformedToken, SigningKey, create

PARAMETER = "/magnetar/token-key"
NOW_S = 1_795_300_000  # 2026-11-21 22:26 UTC: iam_expired's token expired at 16:57
STS_URL = (
    "https://sts.us-east-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15"
    "&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20261121%2Fus-east-1%2Fsts"
    "%2Faws4_request&X-Amz-Date=20261121T222000Z&X-Amz-Expires=900"
    "&X-Amz-SignedHeaders=host%3Bx-magnetar-cluster&X-Amz-Signature=abc"
)


def _authorizer(parameters: SecretParameters, callers: dict[str, str] | None = None,
                enabled: bool = True) -> RequestAuthorizer:  # fmt: skip
    identity = CallerIdentity(callers or {}, {AUDIENCE_HEADER: "magnetar"})
    authenticator = Authenticator(
        KeySource(parameter=PARAMETER, parameters=parameters), identity, "magnetar"
    )
    return RequestAuthorizer(authenticator, enabled, clock_s=lambda: NOW_S)


def test_every_sample_event_has_an_expected_answer_and_gets_it():
    assert names() == sorted(EXPECTED)
    parameters = SecretParameters({PARAMETER: DEMO_KEY})
    authorize = _authorizer(parameters)
    for name, expected in EXPECTED.items():
        assert authorize(event(name)) == expected, name
    assert parameters.reads == 1  # once per container, however many requests


def test_each_denial_is_logged_with_its_reason(caplog):
    authorize = _authorizer(SecretParameters({PARAMETER: DEMO_KEY}))
    with caplog.at_level(logging.INFO, logger="magnetar.authorizer"):
        for name in ("token_expired", "token_tampered", "not_bearer", "iam_expired"):
            authorize(event(name))
    reasons = [r.getMessage() for r in caplog.records]
    assert ["TokenExpired" in reasons[0], "BadSignature" in reasons[1],
            "MalformedToken" in reasons[2], "TokenExpired" in reasons[3]] == [True] * 4  # fmt: skip


def test_no_header_is_denied_and_the_identity_source_is_read_when_headers_are_not():
    authorize = _authorizer(SecretParameters({PARAMETER: DEMO_KEY}))
    sample = event("token_valid")
    token = sample["headers"].pop("authorization")
    assert authorization_header(sample) == token
    assert authorize(sample)["context"] == {"role": "app"}
    sample["identitySource"] = []
    assert authorize(sample) == {"isAuthorized": False}


def test_an_unreadable_key_is_an_error_not_a_cached_denial_and_is_read_again_later(caplog):
    parameters = SecretParameters({})
    authorize = _authorizer(parameters)
    with caplog.at_level(logging.ERROR, logger="magnetar.authorizer"), pytest.raises(InvalidKey):
        authorize(event("token_valid"))
    assert "ParameterNotFound" in caplog.text
    parameters.values[PARAMETER] = DEMO_KEY
    assert authorize(event("token_valid"))["isAuthorized"] is True


def test_with_authentication_disabled_every_request_is_admitted_without_a_role():
    authorize = _authorizer(SecretParameters({}), enabled=False)
    assert authorize(event("token_wrong_key")) == {"isAuthorized": True, "context": {}}


def test_an_iam_token_is_admitted_as_the_role_sts_names():
    session = "arn:aws:sts::123456789012:assumed-role/orders/i-0abc"
    authorize = _authorizer(SecretParameters({}), {STS_URL: session})
    answer = authorize(event("token_valid", f"Bearer {encode_iam_token(STS_URL)}"))
    assert answer == {
        "isAuthorized": True,
        "context": {"role": "arn:aws:iam::123456789012:role/orders"},
    }
    refused = STS_URL.replace("Signature=abc", "Signature=abd")
    assert authorize(event("token_valid", f"Bearer {encode_iam_token(refused)}")) == {
        "isAuthorized": False
    }


def test_iam_tokens_are_refused_where_no_sts_is_wired():
    keys = KeySource(secret_key=DEMO_KEY)
    with pytest.raises(MalformedToken, match="does not accept IAM tokens"):
        Authenticator(keys, None, "magnetar").role_of(f"Bearer {encode_iam_token(STS_URL)}", NOW_S)


def test_the_parameter_holds_a_secret_key_a_pem_public_key_or_pulsars_named_references():
    secret = base64.b64decode(DEMO_KEY)
    assert keys_of_parameter(DEMO_KEY) == (secret, None)
    assert keys_of_parameter(f"data:;base64,{DEMO_KEY}") == (secret, None)
    pair = new_key_pair("RS256")
    from cryptography.hazmat.primitives import serialization

    from magnetar_wire.token_keys import load_public_key

    pem = (
        load_public_key(pair.public_der)
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    assert keys_of_parameter(pem) == (None, pem.strip().encode())
    public_ref = "data:;base64," + base64.b64encode(pair.public_der).decode()
    named = json.dumps({"tokenPublicKey": public_ref})
    assert keys_of_parameter(named) == (None, pair.public_der)
    for bad in ('{"tokenSecret": "x"}', "{not json", '{"tokenSecretKey": 3}', "%%%"):
        with pytest.raises(InvalidKey):
            keys_of_parameter(bad)


def test_an_rs256_token_verifies_with_the_public_key_from_the_parameter_and_not_as_hs256():
    pair = new_key_pair("RS256")
    ref = "data:;base64," + base64.b64encode(pair.public_der).decode()
    keys = KeySource(parameter=PARAMETER,
                     parameters=SecretParameters({PARAMETER: json.dumps({"tokenPublicKey": ref})}))  # fmt: skip
    authenticator = Authenticator(keys, None, "magnetar")
    token = create(SigningKey.private(pair.private_der), "reader")
    assert authenticator.role_of(f"Bearer {token}", NOW_S).name == "reader"
    forged = _hs256(pair.public_der, {"sub": "admin"})  # HS256 keyed with the public key
    with pytest.raises(BadSignature):
        authenticator.role_of(f"Bearer {forged}", NOW_S)


def _hs256(key: bytes, claims: dict) -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    signed = part(b'{"alg":"HS256"}') + "." + part(json.dumps(claims).encode())
    return signed + "." + part(hmac.new(key, signed.encode(), hashlib.sha256).digest())


def test_no_key_configured_is_a_deployment_fault_naming_the_settings():
    with pytest.raises(InvalidKey, match="TOKEN_KEY_PARAMETER"):
        KeySource().keys()
