"""`magnetar tokens` verbs (magnetar.cli.tokens.main): Pulsar's `pulsar tokens` flags and files."""

from __future__ import annotations

import base64
import json
import stat

import pytest

from magnetar.cli import tokens as cli
from magnetar_wire import tokens

NOW_S = 1_800_000_000


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv), now_s=NOW_S)
    out, err = capsys.readouterr()
    return status, out, err


def test_a_secret_key_file_token_and_validation_round_trip(capsys, tmp_path):
    key = tmp_path / "secret.key"
    assert run(capsys, "create-secret-key", "--output", str(key))[0] == 0
    assert len(key.read_bytes()) == 32
    assert stat.S_IMODE(key.stat().st_mode) == 0o600

    status, out, _ = run(capsys, "create", "--secret-key", f"file://{key}", "--subject", "app",
                         "--expiry-time", "1h")  # fmt: skip
    token = out.strip()
    assert status == 0 and tokens.show(token) == ({"alg": "HS256"}, {"sub": "app", "exp": NOW_S + 3600})  # fmt: skip

    status, out, _ = run(capsys, "validate", "-sk", f"file://{key}", token)
    assert status == 0 and json.loads(out) == {"sub": "app", "exp": NOW_S + 3600}


def test_a_base64_secret_key_is_printed_and_usable_as_a_data_url(capsys):
    status, out, _ = run(capsys, "create-secret-key", "--base64")
    encoded = out.strip()
    assert status == 0 and len(base64.b64decode(encoded, validate=True)) == 32
    status, out, _ = run(capsys, "create", "-sk", f"data:;base64,{encoded}", "-s", "r")
    assert status == 0 and tokens.show(out.strip())[1] == {"sub": "r"}


def test_an_es256_key_pair_signs_tokens_the_public_key_validates(capsys, tmp_path):
    private, public = tmp_path / "private.der", tmp_path / "public.der"
    status, _, _ = run(capsys, "create-key-pair", "--sign-algorithm", "ES256",
                       "--output-private-key", str(private), "--output-public-key", str(public))  # fmt: skip
    assert status == 0 and stat.S_IMODE(private.stat().st_mode) == 0o600
    status, out, _ = run(capsys, "create", "--private-key", f"file://{private}", "--subject", "svc")
    token = out.strip()
    assert status == 0 and tokens.show(token)[0] == {"alg": "ES256"}
    assert run(capsys, "validate", "--public-key", f"file://{public}", token)[0] == 0


def test_show_prints_the_header_and_the_claims_of_a_token_from_a_file(capsys, tmp_path):
    token = tokens.create(tokens.SigningKey.secret(bytes(32)), "reader")
    (tmp_path / "t.jwt").write_text(token + "\n")
    status, out, _ = run(capsys, "show", "-f", str(tmp_path / "t.jwt"))
    assert status == 0 and out == '{"alg": "HS256"}\n---\n{"sub": "reader"}\n'


def test_an_expired_token_fails_validation_with_status_1_and_says_what_to_do(capsys):
    key = bytes(32)
    token = tokens.create(tokens.SigningKey.secret(key), "app", expires_at_s=NOW_S - 1)
    encoded = base64.b64encode(key).decode()
    status, out, err = run(capsys, "validate", "-sk", encoded, token)
    assert status == 1 and out == ""
    assert "expired at" in err and "magnetar tokens create" in err


def test_a_token_signed_with_another_key_fails_validation(capsys):
    token = tokens.create(tokens.SigningKey.secret(bytes(32)), "app")
    other = base64.b64encode(b"\x01" * 32).decode()
    status, _, err = run(capsys, "validate", "-sk", other, token)
    assert status == 1 and "does not verify" in err


def test_a_bad_expiry_time_or_key_reference_is_reported_not_raised(capsys, tmp_path):
    status, _, err = run(capsys, "create", "-sk", "data:;base64,AAAA", "-s", "r", "-e", "soon")
    assert status == 1 and "expiry time" in err
    status, _, err = run(capsys, "create", "-sk", f"file://{tmp_path}/none", "-s", "r")
    assert status == 1 and "cannot read key file" in err


def test_create_needs_exactly_one_key_and_a_subject(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["create", "--subject", "r"], now_s=NOW_S)
    assert exited.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["create", "-sk", "AAAA", "-pk", "AAAA", "-s", "r"], now_s=NOW_S)
    capsys.readouterr()
