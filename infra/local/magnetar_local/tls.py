"""TLS on the local gateway's listener (``magnetar local --tls-cert --tls-key``), and client
certificates as API Gateway's mutual TLS hands them to routes and authorizers.

``ListenerTls`` is the server side: the certificate and key it presents and, with
``trust_certs`` (``--tls-trust-certs``, a CA bundle), client certificates asked for and
verified against it (optional: a client without one still connects, as Pulsar's
``tlsRequireTrustedClientCertOnConnect=false``; a client with an untrusted one fails the
handshake). The handshake runs in the connection's own thread (``handshake``), never in
the accepting one, so a slow client delays nobody else.

``client_cert(connection)`` is what API Gateway puts in ``requestContext.authentication.
clientCert`` for a verified client certificate: its PEM, subject and issuer DNs, serial
number and validity; the engine's ``services.credentials`` takes the role from the CN.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509


@dataclass(frozen=True)
class ListenerTls:
    """The listener's certificate (``cert_file``, PEM, with its chain), private key
    (``key_file``) and the CA bundle client certificates are verified with (``trust_certs``;
    None: none asked for)."""

    cert_file: Path
    key_file: Path
    trust_certs: Path | None = None

    def context(self) -> ssl.SSLContext:
        """The server's SSL context. Raises OSError / ssl.SSLError for files that do not
        read as a certificate, its key, or a CA bundle."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(str(self.cert_file), str(self.key_file))
        if self.trust_certs is not None:
            context.load_verify_locations(cafile=str(self.trust_certs))
            context.verify_mode = ssl.CERT_OPTIONAL
        return context

    def wrap(self, listening: socket.socket) -> ssl.SSLSocket:
        """The listening socket, serving TLS; accepted connections shake hands in
        ``handshake`` (their handler's thread)."""
        return self.context().wrap_socket(
            listening, server_side=True, do_handshake_on_connect=False
        )


def handshake(connection: socket.socket, timeout_s: float) -> None:
    """Complete a TLS connection's handshake within ``timeout_s`` (nothing for plain TCP).
    Raises OSError (ssl.SSLError: no TLS, an untrusted client certificate; a timeout)."""
    if isinstance(connection, ssl.SSLSocket):
        previous = connection.gettimeout()
        connection.settimeout(timeout_s)
        try:
            connection.do_handshake()
        finally:
            connection.settimeout(previous)


def client_cert(connection: socket.socket) -> dict[str, Any] | None:
    """``requestContext.authentication.clientCert`` of a verified client certificate on
    ``connection`` (API Gateway's fields), None without one (or without TLS)."""
    if not isinstance(connection, ssl.SSLSocket):
        return None
    der = connection.getpeercert(binary_form=True)
    if not der:
        return None
    certificate = x509.load_der_x509_certificate(der)
    return {
        "clientCertPem": ssl.DER_cert_to_PEM_cert(der),
        "subjectDN": certificate.subject.rfc4514_string(),
        "issuerDN": certificate.issuer.rfc4514_string(),
        "serialNumber": format(certificate.serial_number, "X"),
        "validity": {
            "notBefore": certificate.not_valid_before_utc.strftime("%b %d %H:%M:%S %Y GMT"),
            "notAfter": certificate.not_valid_after_utc.strftime("%b %d %H:%M:%S %Y GMT"),
        },
    }
