"""``ServiceInfo`` and ``ServiceInfoProvider`` (pulsar-client 3.13 / the C++ client 4.x),
and ``ServiceFollower``: what a ``Client`` built on a provider does when it switches.

A provider gives the client its first service (``initial_service_info``), then calls the
callback it got from ``initialize`` with a new ``ServiceInfo`` whenever the client should
move to another deployment (another region's Magnetar API). The client then sends every
later request there (``Transport.switch``): producers register again and resend what they
hold, consumers subscribe again (see ``magnetar._transport.failover`` for what moves and what not).
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnetar._validate import check_type, check_type_or_none
from magnetar.authentication import Authentication
from magnetar.exceptions import OperationNotSupported

if TYPE_CHECKING:
    from .http import Transport

__all__ = ["ServiceFollower", "ServiceInfo", "ServiceInfoProvider", "checked_service_url"]


class ServiceInfo:
    """One deployment the client may use: its HTTP(S) service URL, the authentication it
    expects (None: the ``Client``'s ``authentication`` argument) and the CA bundle that
    verifies its certificate (None: the ``Client``'s ``tls_trust_certs_file_path``, else
    the system's). Immutable."""

    def __init__(self, service_url: str, authentication: Authentication | None = None,
                 tls_trust_certs_file_path: str | None = None) -> None:  # fmt: skip
        """Raises ValueError: a wrong type (pulsar-client's message), a ``pulsar://`` URL
        (Magnetar speaks HTTP) or a URL that is not http(s); OperationNotSupported: an
        authentication Magnetar does not have (plugins, TLS)."""
        check_type(str, service_url, "service_url")
        check_type_or_none(Authentication, authentication, "authentication")
        check_type_or_none(str, tls_trust_certs_file_path, "tls_trust_certs_file_path")
        self._service_url = checked_service_url(service_url)
        if authentication is not None:
            authentication._check_supported()
            if authentication._client_cert() is not None:  # the transport keeps one certificate
                raise OperationNotSupported(
                    "AuthenticationTLS is not supported per cluster: pass it as the Client's "
                    "authentication (every cluster then gets the same client certificate)"
                )
        self._authentication = authentication
        self._tls_trust_certs_file_path = tls_trust_certs_file_path

    @property
    def service_url(self) -> str:
        """The service URL (without a trailing slash)."""
        return self._service_url

    @property
    def authentication(self) -> Authentication | None:
        """The authentication for this deployment, or None."""
        return self._authentication

    @property
    def tls_trust_certs_file_path(self) -> str | None:
        """The CA bundle (PEM path) for this deployment's certificate, or None."""
        return self._tls_trust_certs_file_path

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ServiceInfo):
            return NotImplemented
        return (self._service_url, self._authentication, self._tls_trust_certs_file_path) == (
            other._service_url, other._authentication, other._tls_trust_certs_file_path)  # fmt: skip

    def __hash__(self) -> int:
        return hash((self._service_url, id(self._authentication), self._tls_trust_certs_file_path))

    def __repr__(self) -> str:
        return f"ServiceInfo({self._service_url!r})"


class ServiceInfoProvider(abc.ABC):
    """Tells a ``Client`` which deployment to use, and when to move to another. Pass one
    where pulsar-client takes the service URL: ``Client(provider, ...)``."""

    @abc.abstractmethod
    def initial_service_info(self) -> ServiceInfo:
        """The deployment the client starts on (called once, before ``initialize``)."""

    @abc.abstractmethod
    def initialize(self, on_service_info_update: Callable[[ServiceInfo], None]) -> None:
        """Start watching (called once, by the ``Client``); call ``on_service_info_update``
        with the new ``ServiceInfo`` each time the client should switch. It returns at once
        and may be called from any thread."""

    def close(self) -> None:  # noqa: B027 - optional hook, as the C++ binding calls it if present
        """Stop watching (the ``Client``'s ``close`` / ``shutdown`` call it). Default: nothing."""


def checked_service_url(url: str) -> str:
    """The service URL without its trailing slash. Raises ValueError for a Pulsar
    binary-protocol URL (saying to use the HTTP one) or a URL that is not http(s)."""
    if url.startswith(("pulsar://", "pulsar+ssl://")):
        raise ValueError(
            f"service_url {url!r} is a Pulsar binary-protocol URL; Magnetar speaks HTTP: use "
            "the HTTP URL of the Magnetar API, e.g. 'http://127.0.0.1:8080' or "
            "'https://<api-id>.execute-api.<region>.amazonaws.com'"
        )
    if not re.match(r"^https?://[^/\s]+", url):
        raise ValueError(f"service_url {url!r} must be an http:// or https:// URL")
    return url.rstrip("/")


def _check_info(info: Any) -> ServiceInfo:
    if not isinstance(info, ServiceInfo):
        raise ValueError(f"Expected a pulsar.ServiceInfo instance, not {type(info).__name__!r}")
    return info


class ServiceFollower:
    """Points a client's ``Transport`` at the deployment its provider names. The client's
    own ``authentication`` and ``tls_trust_certs_file_path`` apply where a ``ServiceInfo``
    has none; ``insecure`` (``tls_allow_insecure_connection``) turns verification off."""

    def __init__(self, initial: ServiceInfo, authentication: Authentication | None,
                 trust_path: str | None, insecure: bool) -> None:  # fmt: skip
        self.current = initial
        self._authentication = authentication
        self._trust_path = trust_path
        self._insecure = insecure
        self._transport: Transport | None = None

    @staticmethod
    def initial(provider: ServiceInfoProvider) -> ServiceInfo:
        """The provider's first ``ServiceInfo``; raises ValueError if it returns another type."""
        return _check_info(provider.initial_service_info())

    def authentication(self, info: ServiceInfo) -> Authentication | None:
        """The authentication requests to ``info`` carry."""
        return info.authentication if info.authentication is not None else self._authentication

    def verify(self, info: ServiceInfo) -> bool | str:
        """requests' ``verify`` for ``info``: False, a CA bundle path, or True."""
        if self._insecure:
            return False
        return info.tls_trust_certs_file_path or self._trust_path or True

    def follow(self, transport: Transport, provider: ServiceInfoProvider | None) -> None:
        """Switch ``transport`` on each update of ``provider`` (None: a fixed URL), which
        the transport keeps alive (its producers and consumers may outlive the client) and
        closes with it."""
        if provider is None:
            return
        self._transport = transport
        transport.provider = provider
        provider.initialize(self.on_update)

    def on_update(self, info: ServiceInfo) -> None:
        """The provider's callback: move the transport to ``info`` (nothing when it is the
        current one). Raises ValueError when ``info`` is not a ``ServiceInfo``."""
        info = _check_info(info)
        if info == self.current:
            return
        self.current = info
        if self._transport is not None:
            self._transport.switch(info.service_url, self.authentication(info), self.verify(info))
