"""The SDK's authentication methods against ``magnetar local`` started with Pulsar's security
options (``--auth --anonymous-role --htpasswd --tls-cert --tls-key --tls-trust-certs
--oauth2-issuer --oauth2-audience``, a free port; a local OAuth 2.0 issuer), prepared as Pulsar's client test service (tests/auth_test_service.py): each
method proves its role over https and gets exactly that role's grants."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from auth_test_service import (
    APR1_PASSWORD,
    APR1_USER,
    BASIC_PASSWORD,
    BASIC_USER,
    OAUTH2_ROLE,
    TOKEN_ROLE,
    AuthFiles,
    prepare,
    write_files,
)
from local_process import LocalProcess
from oauth2_issuer import Issuer

import magnetar as pulsar
from magnetar.cli.admin import command as admin_cli
from magnetar_wire import tokens

AUDIENCE = "urn:magnetar:e2e"
PRIVATE = "persistent://private/auth"
PUBLIC = "persistent://public/default"


class SecuredLocal(LocalProcess):
    """``magnetar local`` with every security option, in ``folder``; ``key`` signs tokens."""

    def __init__(self, folder: Path, files: AuthFiles, issuer: Issuer) -> None:
        super().__init__(
            folder, "--auth", "--anonymous-role", "anonymous", "--htpasswd", str(files.htpasswd),
            "--tls-cert", str(files.server_cert), "--tls-key", str(files.server_key),
            "--tls-trust-certs", str(files.ca),
            "--oauth2-issuer", issuer.url, "--oauth2-audience", AUDIENCE,
        )  # fmt: skip
        self.key = self.signing_key()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> AuthFiles:
    return write_files(tmp_path_factory.mktemp("auth-files"))


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    running = Issuer({OAUTH2_ROLE: "oauth2-secret"}).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, files: AuthFiles, issuer: Issuer) -> Iterator[SecuredLocal]:  # fmt: skip
    folder = tmp_path_factory.mktemp("secured-local")
    running = SecuredLocal(folder, files, issuer)
    try:
        admin = {"Authorization": f"Bearer {tokens.create(running.key, 'admin')}"}
        token = tokens.create(running.key, TOKEN_ROLE)
        prepare(running.url, admin, token, folder / "token.txt", verify=str(files.ca))
        running.token_file = folder / "token.txt"  # type: ignore[attr-defined]
        yield running
    finally:
        running.stop()


def _client(service: SecuredLocal, files: AuthFiles, auth: pulsar.Authentication | None) -> pulsar.Client:  # fmt: skip
    return pulsar.Client(service.url, authentication=auth, operation_timeout_seconds=15,
                         tls_trust_certs_file_path=str(files.ca))  # fmt: skip


def _round_trip(client: pulsar.Client, topic: str) -> bytes:
    consumer = client.subscribe(topic, "s", initial_position=pulsar.InitialPosition.Earliest)
    producer = client.create_producer(topic)
    producer.send(b"hello")
    message = consumer.receive(timeout_millis=15_000)
    consumer.acknowledge(message)
    return message.data()


def _topic(base: str) -> str:
    return f"{base}/t-{uuid.uuid4().hex[:8]}"


def test_the_service_url_is_https_and_a_client_without_the_ca_cannot_connect(service, files):
    assert service.url.startswith("https://127.0.0.1:")
    untrusting = pulsar.Client(service.url, operation_timeout_seconds=5)
    try:
        with pytest.raises(pulsar.ConnectError):
            untrusting.create_producer(_topic(PUBLIC))
    finally:
        untrusting.close()
    insecure = pulsar.Client(service.url, tls_allow_insecure_connection=True)
    try:  # certificates not verified: the anonymous role produces on public/default
        insecure.create_producer(_topic(PUBLIC)).send(b"x")
    finally:
        insecure.close()


def test_a_token_from_the_token_file_produces_and_consumes_on_private_auth(service, files):
    client = _client(service, files, pulsar.AuthenticationToken(service.token_file.as_uri()))
    try:
        assert _round_trip(client, _topic(PRIVATE)) == b"hello"
    finally:
        client.close()


def test_basic_users_of_the_htpasswd_file_produce_and_consume_and_a_wrong_password_is_refused(
    service, files
):
    params = json.dumps({"username": APR1_USER, "password": APR1_PASSWORD})
    for auth in (pulsar.AuthenticationBasic(BASIC_USER, BASIC_PASSWORD),
                 pulsar.AuthenticationBasic(auth_params_string=params)):  # fmt: skip
        client = _client(service, files, auth)
        try:
            assert _round_trip(client, _topic(PRIVATE)) == b"hello"
        finally:
            client.close()
    wrong = _client(service, files, pulsar.AuthenticationBasic(BASIC_USER, "wrong"))
    try:
        with pytest.raises(pulsar.AuthenticationError, match="Unknown user or invalid password"):
            wrong.create_producer(_topic(PRIVATE))
    finally:
        wrong.close()


def test_a_client_certificate_proves_its_cn_which_produces_and_consumes(service, files):
    auth = pulsar.AuthenticationTLS(str(files.client_cert), str(files.client_key))
    client = _client(service, files, auth)
    try:
        assert _round_trip(client, _topic(PRIVATE)) == b"hello"
    finally:
        client.close()


def test_a_certificate_of_another_ca_fails_the_handshake(service, files, tmp_path):
    stranger = write_files(tmp_path / "stranger")  # its own CA, the same CN
    auth = pulsar.AuthenticationTLS(str(stranger.client_cert), str(stranger.client_key))
    client = pulsar.Client(service.url, authentication=auth, operation_timeout_seconds=5,
                           tls_trust_certs_file_path=str(files.ca))  # fmt: skip
    try:
        with pytest.raises(pulsar.ConnectError):
            client.create_producer(_topic(PRIVATE))
    finally:
        client.close()


def test_an_oauth2_client_gets_tokens_from_the_issuer_and_its_client_id_produces_and_consumes(
    service, files, issuer, tmp_path
):
    credentials = issuer.write_credentials(tmp_path / "credentials.json", OAUTH2_ROLE)
    params = {"issuer_url": issuer.url, "private_key": credentials.as_uri(), "audience": AUDIENCE}
    before = issuer.token_requests
    client = _client(service, files, pulsar.AuthenticationOauth2(json.dumps(params)))
    try:
        assert _round_trip(client, _topic(PRIVATE)) == b"hello"
        assert issuer.token_requests == before + 1  # one token for the whole round trip
    finally:
        client.close()
    other = {**params, "audience": "urn:someone-else"}
    refused = _client(service, files, pulsar.AuthenticationOauth2(json.dumps(other)))
    try:
        with pytest.raises(pulsar.AuthenticationError, match="audience"):
            refused.create_producer(_topic(PRIVATE))
    finally:
        refused.close()


def test_without_credentials_the_anonymous_role_gets_exactly_its_grants(service, files):
    client = _client(service, files, None)
    try:
        assert _round_trip(client, _topic(PUBLIC)) == b"hello"
        with pytest.raises(pulsar.AuthorizationError, match="Role 'anonymous'"):
            client.create_producer(_topic(PRIVATE))
    finally:
        client.close()


def test_the_admin_cli_authenticates_with_basic_and_tls_plugins(service, files, capsys):
    base = ["--service-url", service.url, "--tls-trust-cert-path", str(files.ca)]
    basic = ["--auth-plugin", "org.apache.pulsar.client.impl.auth.AuthenticationBasic",
             "--auth-params", json.dumps({"userId": BASIC_USER, "password": BASIC_PASSWORD})]  # fmt: skip
    tls = ["--auth-plugin", "org.apache.pulsar.client.impl.auth.AuthenticationTls",
           "--auth-params", f"tlsCertFile:{files.client_cert},tlsKeyFile:{files.client_key}"]  # fmt: skip
    for plugin, role in ((basic, BASIC_USER), (tls, "tls-principal")):
        # a role that is no tenant admin may not list private's namespaces: the 403 names it
        assert admin_cli.main([*base, *plugin, "namespaces", "list", "private"]) == 1
        assert f"Role '{role}'" in capsys.readouterr().err
    wrong = ["--auth-plugin", "AuthenticationBasic", "--auth-params", '{"userId": "x", "password": "y"}']  # fmt: skip
    assert admin_cli.main([*base, *wrong, "namespaces", "list", "private"]) == 1
    assert "AuthenticationError" in capsys.readouterr().err
