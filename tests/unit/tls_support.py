"""A throwaway CA, certificates signed by it, and a small HTTPS server on a free port, for
the tests of the SDK's TLS options (``Client(tls_...)``)."""

from __future__ import annotations

import datetime
import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_PEM = serialization.Encoding.PEM


@dataclass(frozen=True)
class Pki:
    """PEM files: the CA's certificate, a server certificate for 127.0.0.1 and a client
    certificate, with their keys."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> Path:
    path.write_bytes(key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))  # fmt: skip
    return path


def make_pki(folder: Path, now: datetime.datetime) -> Pki:
    """A CA valid around ``now`` and two leaf certificates it signed, written in ``folder``."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1)
    ca = (x509.CertificateBuilder().subject_name(_name("test CA")).issuer_name(_name("test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                       False), critical=True)
          .add_extension(ca_ski, critical=False)
          .sign(ca_key, hashes.SHA256()))  # fmt: skip
    (folder / "ca.pem").write_bytes(ca.public_bytes(_PEM))

    def leaf(name: str, usage: x509.ObjectIdentifier) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(ca.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(start).not_valid_after(end)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.SubjectAlternativeName(
                    [x509.IPAddress(IPv4Address("127.0.0.1"))]), critical=False)
                .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(
                    ca_ski), critical=False)
                .sign(ca_key, hashes.SHA256()))  # fmt: skip
        (folder / f"{name}.pem").write_bytes(cert.public_bytes(_PEM))
        return folder / f"{name}.pem", _write_key(key, folder / f"{name}.key")

    server_cert, server_key = leaf("server", ExtendedKeyUsageOID.SERVER_AUTH)
    client_cert, client_key = leaf("client", ExtendedKeyUsageOID.CLIENT_AUTH)
    return Pki(folder / "ca.pem", server_cert, server_key, client_cert, client_key)


class _Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        if self.command == "POST":
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = json.dumps({"partitions": 0, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # refused handshakes are what some tests expect


@contextmanager
def https_server(pki: Pki, require_client_cert: bool = False) -> Iterator[str]:
    """An HTTPS server on 127.0.0.1 (free port) answering every GET/POST with
    ``{"partitions": 0, "path": ...}``; yields its URL. With ``require_client_cert`` the
    handshake needs a client certificate signed by the CA."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki.server_cert, pki.server_key)
    if require_client_cert:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(pki.ca)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
