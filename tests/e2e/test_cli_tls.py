"""The ``magnetar`` CLI against ``magnetar local --tls-cert --tls-key`` (a self-signed CA's
certificate, from tests/auth_test_service.py, a free port): ``produce`` and ``consume`` verify
the listener with pulsar-client's ``--tlsTrustCertsFilePath`` (or ``--tls-trust-cert-path``),
``admin``, ``functions`` and ``triggers`` with pulsar-admin's ``--tls-trust-cert-path``;
``--tls-allow-insecure`` verifies nothing; without either the certificate is refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from auth_test_service import AuthFiles, write_files
from local_process import LocalProcess

from magnetar.cli.main import main


def tls_local(folder: Path, files: AuthFiles) -> LocalProcess:
    """``magnetar local --tls-cert --tls-key`` (no authentication) in ``folder``."""
    return LocalProcess(
        folder, "--tls-cert", str(files.server_cert), "--tls-key", str(files.server_key)
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> AuthFiles:
    return write_files(tmp_path_factory.mktemp("tls-files"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, files: AuthFiles) -> Iterator[LocalProcess]:
    running = tls_local(tmp_path_factory.mktemp("tls-local"), files)
    try:
        yield running
    finally:
        running.stop()


def _topic() -> str:
    return f"persistent://public/default/tls-{uuid.uuid4().hex[:8]}"


def test_produce_without_a_trusted_ca_is_refused_and_with_pulsar_clients_option_is_served(
    service, files, capsys
):
    topic = _topic()
    assert service.url.startswith("https://127.0.0.1:")
    assert main(["produce", topic, "-m", "x", "--service-url", service.url]) == 1
    assert "ConnectError" in capsys.readouterr().err
    produced = ["produce", topic, "-m", "a,b", "--service-url", service.url]
    assert main([*produced, "--tlsTrustCertsFilePath", str(files.ca)]) == 0
    assert "2 messages successfully produced" in capsys.readouterr().out
    consumed = ["consume", topic, "-s", "s", "-p", "Earliest", "-n", "2", "--timeout", "15"]
    assert main([*consumed, "--service-url", service.url, "--tls-trust-cert-path", str(files.ca)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "content:a" in out and "content:b" in out and "2 messages successfully consumed" in out


def test_produce_and_consume_with_tls_allow_insecure_verify_nothing(service, capsys):
    topic = _topic()
    common = ["--service-url", service.url, "--tls-allow-insecure"]
    assert main(["produce", topic, "-m", "c", *common]) == 0
    assert main(["consume", topic, "-s", "s", "-p", "Earliest", "--timeout", "15", *common]) == 0
    assert "content:c" in capsys.readouterr().out


def test_admin_functions_and_triggers_verify_the_listener_with_the_trust_cert_path(
    service, files, capsys
):
    topic = _topic()
    trust = ["--service-url", service.url, "--tls-trust-cert-path", str(files.ca)]
    assert main(["admin", "topics", "create", topic, *trust]) == 0
    assert main(["admin", "topics", "list", "public/default", *trust, "-o", "json"]) == 0
    assert topic in capsys.readouterr().out
    assert main(["admin", "topics", "list", "public/default", "--service-url", service.url]) == 1
    assert "ConnectError" in capsys.readouterr().err
    assert main(["functions", "list", *trust]) == 0
    assert main(["triggers", "list", topic, *trust]) == 0
    assert main(["admin", "--tls-allow-insecure", "tenants", "list", "--service-url", service.url]) == 0  # fmt: skip
    assert "public" in capsys.readouterr().out
