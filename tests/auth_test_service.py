"""Prepare a service as Pulsar's client test service is prepared, for the auth tests.

Two steps, each usable alone:

* ``write_files(folder)`` writes what ``magnetar local`` is started with and what clients
  present: a CA, a server certificate for ``localhost``/``127.0.0.1``, a client certificate
  whose CN is ``TLS_ROLE`` (all with ``cryptography``), an htpasswd file with ``BASIC_USER``
  (a bcrypt entry) and ``APR1_USER`` (an apr1 entry);
* ``prepare(url, superuser_headers, token_file, ...)`` creates, through the admin REST API,
  tenant ``public`` (admin role ``ANONYMOUS``, namespace ``public/default`` where the
  anonymous role may produce and consume) and tenant ``private`` with namespace
  ``private/auth`` whose grants are produce+consume for ``TOKEN_ROLE``, ``BASIC_USER``,
  ``APR1_USER``, ``TLS_ROLE`` and ``OAUTH2_ROLE``, and writes ``TOKEN_ROLE``'s token to ``token_file``.

As a script (against a running ``magnetar local --auth``)::

    python tests/auth_test_service.py files DIR           # then start magnetar local with them
    python tests/auth_test_service.py prepare URL DIR [--ca DIR/ca.pem]

``prepare`` signs the token with ``DIR/secret.key`` and authenticates as the superuser
``admin`` with a token of that key.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import bcrypt
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from passlib.hash import apr_md5_crypt

ANONYMOUS = "anonymous"
TOKEN_ROLE = "token-principal"
BASIC_USER, BASIC_PASSWORD = "basic-principal", "basic-secret"
APR1_USER, APR1_PASSWORD = "apr1-principal", "apr1-secret"
TLS_ROLE = "tls-principal"
OAUTH2_ROLE = "oauth2-principal"
"""The OAuth 2.0 client id whose access tokens' ``sub`` is the role."""
CLIENT_ROLES = (TOKEN_ROLE, BASIC_USER, APR1_USER, TLS_ROLE, OAUTH2_ROLE)


@dataclass(frozen=True)
class AuthFiles:
    """The files ``write_files`` wrote (PEM unless said)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    htpasswd: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
                 signer: ec.EllipticCurvePrivateKey, ca: bool = False,
                 server: bool = False) -> x509.Certificate:  # fmt: skip
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False
        )
    )
    if ca:
        usage = x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                              data_encipherment=False, key_agreement=False, key_cert_sign=True,
                              crl_sign=True, encipher_only=False, decipher_only=False)  # fmt: skip
        builder = builder.add_extension(usage, critical=True)
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)  # fmt: skip
    elif not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)  # fmt: skip
    return builder.sign(signer, hashes.SHA256())


def _write_pair(folder: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> tuple[Path, Path]:  # fmt: skip
    cert_path, key_path = folder / f"{stem}.pem", folder / f"{stem}.key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    key_path.chmod(0o600)
    return cert_path, key_path


def write_files(folder: Path, client_role: str = TLS_ROLE) -> AuthFiles:
    """A CA, the server's and a client's (CN ``client_role``) certificates and keys, and
    the htpasswd file, in ``folder`` (made when missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _certificate("magnetar-test-ca", ca_key, _name("magnetar-test-ca"), ca_key, ca=True)
    ca, _ = _write_pair(folder, "ca", ca_cert, ca_key)
    server_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())  # fmt: skip
    server = _certificate("localhost", server_key, ca_cert.subject, ca_key, server=True)
    client = _certificate(client_role, client_key, ca_cert.subject, ca_key)
    server_cert, server_key_path = _write_pair(folder, "server", server, server_key)
    client_cert, client_key_path = _write_pair(folder, "client", client, client_key)
    htpasswd = folder / "htpasswd"
    hashed = bcrypt.hashpw(BASIC_PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    lines = [
        f"{BASIC_USER}:{hashed.replace('$2b$', '$2y$', 1)}",  # htpasswd -B writes $2y$
        f"{APR1_USER}:{apr_md5_crypt.hash(APR1_PASSWORD)}",
    ]
    htpasswd.write_text("\n".join(lines) + "\n")
    return AuthFiles(ca, server_cert, server_key_path, client_cert, client_key_path, htpasswd)


def prepare(url: str, superuser_headers: dict[str, str], token: str, token_file: Path,
            verify: bool | str = True, cluster: str = "magnetar") -> None:  # fmt: skip
    """Tenants, namespaces and grants as the module's docstring says, through the admin
    API at ``url``; ``token`` (``TOKEN_ROLE``'s) is written to ``token_file``. Raises
    requests.HTTPError for a refusal (409 Conflict is fine: already there)."""
    session = requests.Session()
    session.headers.update(superuser_headers)

    def call(method: str, path: str, body: object = None) -> None:
        # verify per request: requests' session.verify loses to $REQUESTS_CA_BUNDLE
        answer = session.request(method, url + path, json=body, timeout=30, verify=verify)
        if answer.status_code != 409:
            answer.raise_for_status()

    call("POST", "/admin/v2/tenants/public", {"adminRoles": [ANONYMOUS], "allowedClusters": [cluster]})  # fmt: skip
    call("PUT", "/admin/v2/namespaces/public/default")
    call("POST", f"/admin/v2/namespaces/public/default/permissions/{ANONYMOUS}", ["produce", "consume"])  # fmt: skip
    call("PUT", "/admin/v2/tenants/private", {"adminRoles": [], "allowedClusters": [cluster]})
    call("PUT", "/admin/v2/namespaces/private/auth")
    for role in CLIENT_ROLES:
        path = f"/admin/v2/namespaces/private/auth/permissions/{quote(role, safe='')}"
        call("POST", path, ["produce", "consume"])
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)


def main(argv: list[str]) -> int:
    from magnetar_wire import tokens

    parser = argparse.ArgumentParser(prog="auth_test_service.py", description=__doc__.split("\n\n")[0])  # fmt: skip
    steps = parser.add_subparsers(dest="step", required=True)
    steps.add_parser("files").add_argument("folder", type=Path)
    ready = steps.add_parser("prepare")
    ready.add_argument("url")
    ready.add_argument("folder", type=Path)
    ready.add_argument("--ca", help="the CA bundle of an https:// URL")
    args = parser.parse_args(argv)
    if args.step == "files":
        print(write_files(args.folder))
        return 0
    key = tokens.SigningKey.secret((args.folder / "secret.key").read_bytes())
    admin = {"Authorization": f"Bearer {tokens.create(key, 'admin')}"}
    token_file = args.folder / "token.txt"
    prepare(args.url, admin, tokens.create(key, TOKEN_ROLE), token_file, args.ca or True)
    print(f"prepared {args.url}; {TOKEN_ROLE}'s token in {token_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
