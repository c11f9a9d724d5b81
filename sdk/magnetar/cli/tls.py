"""The CLI's TLS trust options, as Pulsar's tools name them: ``--tls-trust-cert-path FILE``
(pulsar-admin's; ``produce`` and ``consume`` also take pulsar-client's
``--tlsTrustCertsFilePath``), the CA bundle that verifies an ``https://`` service's
certificate (a ``magnetar local --tls-cert`` listener's self-signed one: docs/security.md),
and ``--tls-allow-insecure`` (pulsar-admin's), which verifies nothing. They become the SDK's
``Client(tls_trust_certs_file_path=..., tls_allow_insecure_connection=...)``, or the admin
transport's ``verify``."""

from __future__ import annotations

import argparse

TRUST_HELP = (
    "the CA bundle (PEM) that verifies an https:// service's certificate, e.g. the "
    "certificate of `magnetar local --tls-cert` (default: the system's CAs)"
)
INSECURE_HELP = "do not verify the https:// service's certificate (tests only)"
VALUE_OPTIONS = ("--tls-trust-cert-path", "--tlsTrustCertsFilePath")
"""The TLS options that take a value (``admin.hoist_global_options`` moves them)."""
FLAG_OPTIONS = ("--tls-allow-insecure",)
"""The TLS options without a value."""


def add_tls_options(parser: argparse.ArgumentParser, *, client_name: bool = False) -> None:
    """``--tls-trust-cert-path`` (with pulsar-client's ``--tlsTrustCertsFilePath`` when
    ``client_name``) and ``--tls-allow-insecure`` on ``parser``."""
    names = ["--tls-trust-cert-path", *(["--tlsTrustCertsFilePath"] if client_name else [])]
    parser.add_argument(*names, dest="tls_trust_cert_path", metavar="FILE", help=TRUST_HELP)
    parser.add_argument(
        "--tls-allow-insecure", dest="tls_allow_insecure", action="store_true", help=INSECURE_HELP
    )


def verify(args: argparse.Namespace) -> bool | str:
    """What the admin transport verifies the service's certificate with (``requests``'
    ``verify``): the trust file, False when insecure, else True (the system's CAs)."""
    if getattr(args, "tls_allow_insecure", False):
        return False
    return getattr(args, "tls_trust_cert_path", None) or True
