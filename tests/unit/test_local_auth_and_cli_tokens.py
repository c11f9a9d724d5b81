"""``magnetar local --auth`` (key file, superuser token file, probe), the SDK's
``AuthenticationToken`` forms, and the CLI's tokens: ``--auth-params``,
``$MAGNETAR_AUTH_TOKEN``, the local stack's token file, ``magnetar tokens``."""

from __future__ import annotations

import json
import os
import stat

import pytest

import magnetar as pulsar
from magnetar.cli import main as cli
from magnetar.cli.service_url import ServiceUrl, auth_token
from magnetar_local import main as local_main
from magnetar_local.auth import LocalAuth
from magnetar_local.readiness import probe_headers
from magnetar_wire import tokens

LOCAL = ServiceUrl("http://127.0.0.1:9999", "the running `magnetar local`")


def test_auth_creates_a_private_secret_key_and_a_superuser_token_that_verifies(tmp_path):
    auth = LocalAuth.prepare(tmp_path / ".magnetar", None, ["root", "ops"])
    key = auth.secret_key_file.read_bytes()
    assert len(key) == 32
    assert stat.S_IMODE(auth.secret_key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(auth.token_file.stat().st_mode) == 0o600
    assert auth.token_file.read_text().strip() == auth.token
    claims = tokens.validate(auth.token, tokens.VerificationKeys.of(key), now_s=2_000_000_000)
    assert (claims.subject, claims.expires_at_s) == ("root", None)
    assert auth.environment["AUTHENTICATION_ENABLED"] == "true"
    assert auth.environment["SUPERUSER_ROLES"] == "root,ops"
    assert auth.environment["TOKEN_SECRET_KEY"] == auth.secret_key_file.as_uri()


def test_an_existing_secret_key_file_is_kept(tmp_path):
    key_file = tmp_path / "my.key"
    key_file.write_bytes(b"k" * 32)
    auth = LocalAuth.prepare(tmp_path / "state", key_file)
    assert key_file.read_bytes() == b"k" * 32
    tokens.validate(auth.token, tokens.VerificationKeys.of(b"k" * 32), now_s=0)


def test_the_readiness_probe_sends_the_superusers_token_and_none_without_auth(tmp_path):
    auth = LocalAuth.prepare(tmp_path, None)
    assert probe_headers(auth) == {"Authorization": f"Bearer {auth.token}"}
    assert probe_headers(None) == {}


def test_key_options_without_auth_are_refused_before_anything_starts(tmp_path, capsys):
    assert local_main.run(["--secret-key", str(tmp_path / "k")]) == 2
    assert "need --auth" in capsys.readouterr().err
    assert not (tmp_path / "k").exists()


def test_a_file_token_is_read_for_every_request_so_a_rotated_token_is_sent(svc, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    client = pulsar.Client(svc.url, authentication=pulsar.AuthenticationToken(token_file.as_uri()))
    client.get_topic_partitions("a")
    token_file.write_text("second")
    client.get_topic_partitions("b")
    token_file.unlink()
    with pytest.raises(pulsar.ErrorGettingAuthenticationData, match="cannot read the token file"):
        client.get_topic_partitions("c")
    client.close()
    sent = [r.headers.get("Authorization") for r in svc.recorded("partitions")]
    assert sent == ["Bearer first", "Bearer second"]


def _local_stack_files(folder, url: str) -> None:
    (folder / "services").mkdir(parents=True, exist_ok=True)
    record = {"pid": os.getpid(), "url": url, "auth": True}
    (folder / "services" / f"{os.getpid()}.json").write_text(json.dumps(record))
    (folder / "local.token").write_text("local-token\n")


def test_the_cli_token_is_the_flag_else_the_environment_else_the_local_stacks_file(tmp_path):
    _local_stack_files(tmp_path / ".magnetar", LOCAL.url)
    env = {"MAGNETAR_AUTH_TOKEN": "from-env"}
    assert auth_token("token:from-flag", LOCAL, env, tmp_path) == "from-flag"
    assert auth_token("file:///t", LOCAL, env, tmp_path) == "file:///t"
    assert auth_token(None, LOCAL, env, tmp_path) == "from-env"
    local = auth_token(None, LOCAL, {}, tmp_path)
    assert local == (tmp_path / ".magnetar" / "local.token").resolve().as_uri()


def test_the_local_stacks_token_is_never_sent_to_another_service(tmp_path):
    _local_stack_files(tmp_path / ".magnetar", LOCAL.url)
    elsewhere = ServiceUrl("https://magnetar.example.com", "--service-url")
    assert auth_token(None, elsewhere, {}, tmp_path) is None


def test_magnetar_tokens_is_dispatched_by_the_magnetar_command(capsys):
    token = tokens.create(tokens.SigningKey.secret(b"s" * 32), "app")
    assert cli.main(["tokens", "show", token]) == 0
    assert '{"sub": "app"}' in capsys.readouterr().out


def test_magnetar_tokens_without_its_extra_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(cli.EXTRA_VERBS, "tokens", ("magnetar_no_such_module", "main"))
    assert cli.main(["tokens", "show", "x"]) == 2
    assert "pip install 'magnetar-client[tokens]'" in capsys.readouterr().err
