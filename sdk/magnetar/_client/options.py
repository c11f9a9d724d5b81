"""``Client(...)``'s arguments: pulsar-client 3.13's type checks and error messages, and what
each option becomes over HTTP(S).

Options that have a meaning over HTTP work: ``operation_timeout_seconds`` (the read timeout of
each request), ``connection_timeout_ms`` (the connect timeout), ``logger``, ``use_tls`` (an
``https://`` URL is required), ``tls_trust_certs_file_path`` (the CA bundle that verifies the
service's certificate), ``tls_allow_insecure_connection`` (certificates not verified),
``tls_certificate_file_path`` / ``tls_private_key_file_path`` (the client certificate
presented in the TLS handshake, e.g. to API Gateway mutual TLS; ``AuthenticationTLS``'s when
these are not set). The others are accepted,
type-checked no-ops; docs/guide/sdk.md, "pulsar-client options", says why for each.

``service_url`` may be a ``ServiceInfoProvider`` instead of a URL (cluster failover): its
initial ``ServiceInfo`` gives the URL, and its authentication and CA bundle, where set,
replace the ``authentication`` and ``tls_trust_certs_file_path`` arguments (which apply to
the deployments whose ``ServiceInfo`` has none).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from magnetar._logger import ConsoleLogger, FileLogger
from magnetar._transport.service_info import ServiceFollower, ServiceInfo, ServiceInfoProvider
from magnetar._transport.service_info import checked_service_url as service_url
from magnetar._validate import check_type, check_type_or_none
from magnetar.authentication import Authentication

__all__ = ["ClientSettings", "client_settings", "service_url"]

_INTS = ("operation_timeout_seconds", "connection_timeout_ms", "io_threads",
         "message_listener_threads", "concurrent_lookup_requests", "stats_interval_in_seconds",
         "memory_limit_bytes")  # fmt: skip
_OPTIONAL_STRS = ("log_conf_file_path", "tls_trust_certs_file_path", "listener_name",
                  "tls_private_key_file_path", "tls_certificate_file_path")  # fmt: skip
_BOOLS = ("use_tls", "tls_allow_insecure_connection", "tls_validate_hostname")


@dataclass(frozen=True)
class ClientSettings:
    """What the checked ``Client`` arguments mean for the HTTP transport.

    ``verify`` is requests' ``verify`` (True, False, or a CA bundle path); ``cert`` is its
    ``cert`` (None, a PEM path holding certificate and key, or ``(cert, key)``); timeouts are
    in seconds. ``follower`` follows the ``provider`` (None for a plain URL).
    """

    url: str
    authentication: Authentication | None
    follower: ServiceFollower
    provider: ServiceInfoProvider | None
    logger: logging.Logger
    operation_timeout_s: float
    connect_timeout_s: float
    verify: bool | str
    cert: str | tuple[str, str] | None


def _logger(logger: Any) -> logging.Logger:
    if logger is None:
        return logging.getLogger("magnetar")
    if isinstance(logger, logging.Logger):
        return logger
    if isinstance(logger, (ConsoleLogger, FileLogger)):
        return logger.logger
    raise ValueError(
        "Logger is expected to be either None, logger.Logger, pulsar.ConsoleLogger or "
        "pulsar.FileLogger"
    )


def client_settings(a: dict[str, Any]) -> ClientSettings:
    """Check ``Client.__init__``'s arguments ``a`` (by name) and map them to settings.

    Raises:
        ValueError: a wrong type (pulsar-client's message), a bad service URL, a logger of
            another kind, ``use_tls`` with an ``http://`` URL, a TLS private key without its
            certificate, or a provider whose initial service info is not a ``ServiceInfo``.
        OperationNotSupported: an ``authentication`` Magnetar does not have (plugins, Athenz).
    """
    provider = a["service_url"] if isinstance(a["service_url"], ServiceInfoProvider) else None
    if provider is None:
        check_type(str, a["service_url"], "service_url")
    check_type_or_none(Authentication, a["authentication"], "authentication")
    for name in _INTS:
        check_type(int, a[name], name)
    for name in _OPTIONAL_STRS:
        check_type_or_none(str, a[name], name)
    for name in _BOOLS:
        check_type(bool, a[name], name)
    if a["authentication"] is not None:
        a["authentication"]._check_supported()
    info = (ServiceFollower.initial(provider) if provider is not None
            else ServiceInfo(a["service_url"]))  # fmt: skip
    url = info.service_url
    if a["use_tls"] and not url.startswith("https://"):
        raise ValueError(
            f"use_tls=True needs an https:// service URL, not {url!r}: TLS is on exactly when "
            "the URL is https://"
        )
    follower = ServiceFollower(info, a["authentication"], a["tls_trust_certs_file_path"],
                               a["tls_allow_insecure_connection"])  # fmt: skip
    cert_path, key_path = a["tls_certificate_file_path"], a["tls_private_key_file_path"]
    if key_path and not cert_path:
        raise ValueError("tls_private_key_file_path needs tls_certificate_file_path")
    cert: str | tuple[str, str] | None = (cert_path, key_path) if key_path else cert_path
    if not cert and a["authentication"] is not None:  # AuthenticationTLS's certificate
        cert = a["authentication"]._client_cert()
    return ClientSettings(url=url, authentication=follower.authentication(info),
                          follower=follower, provider=provider, logger=_logger(a["logger"]),
                          operation_timeout_s=float(a["operation_timeout_seconds"]),
                          connect_timeout_s=a["connection_timeout_ms"] / 1000,
                          verify=follower.verify(info), cert=cert or None)  # fmt: skip
