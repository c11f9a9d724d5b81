"""Tokens as Pulsar's `pulsar tokens` makes them: format, signing, validation and its errors."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from magnetar_wire import token_keys, tokens
from magnetar_wire.tokens import (
    BadSignature,
    MalformedToken,
    MissingToken,
    SigningKey,
    TokenExpired,
    VerificationKeys,
)

SECRET = bytes(range(32))
HS256_HEADER = b'{"alg":"HS256"}'

NOW_S = 1_800_000_000


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jjwt_hs256(claims: bytes, key: bytes = SECRET) -> str:
    """A token built by hand as Pulsar's jjwt writes it: compact JSON, header {"alg":"HS256"}."""
    signing_input = f"{b64url(HS256_HEADER)}.{b64url(claims)}"
    signature = hmac.new(key, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(signature)}"


@pytest.fixture(scope="module")
def es256() -> token_keys.KeyPair:
    return token_keys.new_key_pair("ES256")


@pytest.fixture(scope="module")
def rs256() -> token_keys.KeyPair:
    return token_keys.new_key_pair("RS256")


def secret_keys() -> VerificationKeys:
    return VerificationKeys.of(secret_key=SECRET)


def test_a_secret_key_token_is_byte_for_byte_what_pulsar_writes():
    token = tokens.create(SigningKey.secret(SECRET), "admin", expires_at_s=NOW_S + 60)
    assert token == jjwt_hs256(f'{{"sub":"admin","exp":{NOW_S + 60}}}'.encode())
    assert tokens.show(token) == ({"alg": "HS256"}, {"sub": "admin", "exp": NOW_S + 60})


def test_a_token_without_expiry_has_only_the_subject_claim():
    token = tokens.create(SigningKey.secret(SECRET), "reader")
    assert token == jjwt_hs256(b'{"sub":"reader"}')
    assert tokens.validate(token, secret_keys(), NOW_S).expires_at_s is None


def test_a_token_made_as_pulsar_makes_it_validates_to_its_subject():
    claims = tokens.validate(jjwt_hs256(b'{"sub":"app-1"}'), secret_keys(), NOW_S)
    assert claims.subject == "app-1" and claims.raw == {"sub": "app-1"}


def test_a_token_is_valid_until_the_second_before_its_expiry():
    token = tokens.create(SigningKey.secret(SECRET), "r", expires_at_s=NOW_S)
    assert tokens.validate(token, secret_keys(), NOW_S - 1).subject == "r"
    with pytest.raises(TokenExpired) as expired:
        tokens.validate(token, secret_keys(), NOW_S)
    assert "expired at 2027-01-15 08:00:00 UTC" in expired.value.message
    assert (
        "magnetar tokens create" in expired.value.message and "--subject r" in expired.value.message
    )
    assert expired.value.status == 401 and expired.value.code == "AuthenticationError"


def test_leeway_lets_an_expired_token_through_for_that_many_seconds():
    token = tokens.create(SigningKey.secret(SECRET), "r", expires_at_s=NOW_S)
    assert tokens.validate(token, secret_keys(), NOW_S + 4, leeway_s=5).subject == "r"
    with pytest.raises(TokenExpired):
        tokens.validate(token, secret_keys(), NOW_S + 5, leeway_s=5)


def test_a_token_not_yet_valid_is_refused_until_its_nbf():
    token = jjwt_hs256(f'{{"sub":"r","nbf":{NOW_S}}}'.encode())
    with pytest.raises(TokenExpired, match="not valid before"):
        tokens.validate(token, secret_keys(), NOW_S - 1)
    assert tokens.validate(token, secret_keys(), NOW_S).subject == "r"


@pytest.mark.parametrize("token", [None, "", "   "])
def test_no_token_is_a_missing_token_that_says_how_to_send_one(token):
    with pytest.raises(MissingToken, match="Authorization: Bearer"):
        tokens.validate(token, secret_keys(), NOW_S)


@pytest.mark.parametrize("token", ["abc", "a.b", "a.b.c", "😀.😀.😀", "eyJhbGciOiJIUzI1NiJ9..x"])
def test_text_that_is_no_jwt_is_a_malformed_token(token):
    with pytest.raises(MalformedToken):
        tokens.validate(token, secret_keys(), NOW_S)


@pytest.mark.parametrize(
    "claims",
    [b'{"exp":1}', b'{"sub":""}', b'{"sub":7}', b'{"sub":"r","exp":"soon"}', b"[1]", b"not json"],
)
def test_claims_without_a_string_subject_or_with_a_non_numeric_expiry_are_malformed(claims):
    with pytest.raises(MalformedToken):
        tokens.validate(jjwt_hs256(claims), secret_keys(), NOW_S)


def test_a_tampered_claim_breaks_the_signature():
    header, _, signature = jjwt_hs256(b'{"sub":"reader"}').split(".")
    forged = ".".join((header, b64url(b'{"sub":"superuser"}'), signature))
    with pytest.raises(BadSignature, match="does not verify"):
        tokens.validate(forged, secret_keys(), NOW_S)


def test_a_token_signed_with_another_secret_key_is_refused():
    other = tokens.create(SigningKey.secret(bytes(32)), "r")
    with pytest.raises(BadSignature):
        tokens.validate(other, secret_keys(), NOW_S)


def test_an_unsigned_alg_none_token_is_refused():
    unsigned = b64url(b'{"alg":"none"}') + "." + b64url(b'{"sub":"admin"}') + "."
    with pytest.raises(BadSignature, match="signed with none"):
        tokens.validate(unsigned, secret_keys(), NOW_S)


def test_a_hs256_token_signed_with_the_public_key_bytes_is_refused(rs256):
    """The algorithm-confusion attack: the public key is no secret."""
    keys = VerificationKeys.of(public_key=rs256.public_der)
    forged = jjwt_hs256(b'{"sub":"admin"}', key=rs256.public_der)
    with pytest.raises(BadSignature, match="verifies only RS256"):
        tokens.validate(forged, keys, NOW_S)


def test_rs256_and_es256_key_pair_tokens_validate_with_their_public_keys(rs256, es256):
    for pair, algorithm in ((rs256, "RS256"), (es256, "ES256")):
        token = tokens.create(SigningKey.private(pair.private_der), "svc", NOW_S + 10)
        assert tokens.show(token)[0] == {"alg": algorithm}
        keys = VerificationKeys.of(public_key=pair.public_der)
        assert tokens.validate(token, keys, NOW_S).subject == "svc"


def test_a_key_pair_token_does_not_validate_with_another_pairs_public_key(rs256, es256):
    token = tokens.create(SigningKey.private(es256.private_der), "svc")
    with pytest.raises(BadSignature):
        tokens.validate(token, VerificationKeys.of(public_key=rs256.public_der), NOW_S)
    other = token_keys.new_key_pair("ES256")
    with pytest.raises(BadSignature):
        tokens.validate(token, VerificationKeys.of(public_key=other.public_der), NOW_S)


def test_a_service_with_both_keys_validates_both_kinds_of_token(es256):
    keys = VerificationKeys.of(secret_key=SECRET, public_key=es256.public_der)
    assert tokens.validate(jjwt_hs256(b'{"sub":"a"}'), keys, NOW_S).subject == "a"
    token = tokens.create(SigningKey.private(es256.private_der), "b")
    assert tokens.validate(token, keys, NOW_S).subject == "b"


def test_a_key_pair_is_pkcs8_and_subject_public_key_info_der(es256):
    from cryptography.hazmat.primitives import serialization

    assert serialization.load_der_private_key(es256.private_der, password=None)
    assert serialization.load_der_public_key(es256.public_der)
    assert token_keys.algorithms_of(token_keys.load_public_key(es256.public_der)) == ("ES256",)


def test_a_key_cannot_sign_an_algorithm_of_another_kind(es256):
    with pytest.raises(token_keys.InvalidKey, match="cannot sign RS256"):
        tokens.create(SigningKey.private(es256.private_der), "r", algorithm="RS256")
    with pytest.raises(ValueError, match="subject"):
        tokens.create(SigningKey.secret(SECRET), " ")


def test_validation_needs_a_key_and_refuses_an_unreadable_public_key():
    with pytest.raises(token_keys.InvalidKey, match="secret key or a public key"):
        VerificationKeys.of()
    with pytest.raises(token_keys.InvalidKey, match="SubjectPublicKeyInfo"):
        VerificationKeys.of(public_key=b"not a key")


def test_a_secret_key_is_32_random_bytes():
    assert len(token_keys.new_secret_key()) == 32
    assert token_keys.new_secret_key() != token_keys.new_secret_key()


def test_key_references_read_files_data_urls_and_plain_base64(tmp_path):
    path = tmp_path / "my key"
    path.write_bytes(SECRET)
    encoded = base64.b64encode(SECRET).decode()
    assert token_keys.resolve(f"file://{tmp_path}/my%20key") == SECRET
    assert token_keys.resolve(f"data:;base64,{encoded}") == SECRET
    assert token_keys.resolve(f"data:application/octet-stream;base64,{encoded}") == SECRET
    assert token_keys.resolve(f"  {encoded}\n") == SECRET


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        ("", "empty"),
        ("file://relative/key", "absolute path"),
        ("data:,raw", "must be base64"),
        ("data:;base64,%%%", "not valid base64"),
        ("/etc/key.bin", "not valid base64"),
    ],
)
def test_a_bad_key_reference_says_how_to_write_one(reference, says):
    with pytest.raises(token_keys.InvalidKey, match=says):
        token_keys.resolve(reference)


def test_a_missing_key_file_is_an_invalid_key_naming_the_file(tmp_path):
    with pytest.raises(token_keys.InvalidKey, match="cannot read key file"):
        token_keys.resolve(f"file://{tmp_path}/absent")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10", 10), ("10s", 10), ("30m", 1800), ("1h", 3600), ("7d", 604_800), ("2w", 1_209_600),
     ("1y", 31_536_000), ("1H", 3600)],
)  # fmt: skip
def test_expiry_times_are_read_with_pulsars_units(text, seconds):
    assert tokens.parse_relative_time_s(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "1.5h", "1mo", "-1h", "1 hour"])
def test_an_expiry_time_pulsar_would_not_read_is_refused_with_the_format(text):
    with pytest.raises(ValueError, match="expiry time"):
        tokens.parse_relative_time_s(text)


def test_a_bearer_header_gives_its_token_and_other_schemes_are_malformed():
    assert tokens.bearer_token("Bearer abc.def.ghi") == "abc.def.ghi"
    assert tokens.bearer_token("bearer  abc ") == "abc"
    with pytest.raises(MissingToken):
        tokens.bearer_token(None)
    with pytest.raises(MalformedToken, match="Bearer <token>"):
        tokens.bearer_token("Basic dXNlcjpwYXNz")
    with pytest.raises(MalformedToken):
        tokens.bearer_token("Bearer ")


def test_show_does_not_check_the_signature_but_refuses_what_is_no_jwt():
    header, claims = tokens.show(jjwt_hs256(b'{"sub":"x","exp":5}', key=bytes(32)))
    assert header == {"alg": "HS256"} and claims == {"sub": "x", "exp": 5}
    with pytest.raises(MalformedToken):
        tokens.show("nope")


def test_claims_keep_unknown_fields_and_expiry():
    token = jjwt_hs256(json.dumps({"sub": "r", "exp": NOW_S + 1, "aud": "x"}).encode())
    claims = tokens.validate(token, secret_keys(), NOW_S)
    assert claims.expires_at_s == NOW_S + 1 and claims.raw["aud"] == "x"
