"""Where a webhook may point: on AWS only https to public addresses (no SSRF into the VPC,
loopback or the link-local metadata service), unless the deployment allows private ones
(``TRIGGER_PRIVATE_WEBHOOKS``; the local stack does, so webhooks reach 127.0.0.1). Pure:
the names a URL's host resolves to are checked by the webhook adapter when it sends
(``public_address``), since they may change after the trigger is stored."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from magnetar_core.domain.errors import InvalidMessage

LOCAL_NAMES = ("localhost", "localhost.localdomain")


def public_address(address: str) -> bool:
    """Whether an IP address (text) is a public, routable one (not private, loopback,
    link-local, multicast, reserved or unspecified)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_webhook_url(url: str, allow_private: bool) -> None:
    """Refuse a webhook URL the deployment may not call: unless ``allow_private``, it must
    be https, and its host neither a local name nor a non-public IP literal. Raises
    InvalidMessage naming ``target.url``."""
    if allow_private:
        return
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if parts.scheme != "https":
        raise InvalidMessage(
            "Field 'target.url' must be an https URL (plain http only where the deployment "
            "allows private webhooks: TRIGGER_PRIVATE_WEBHOOKS)"
        )
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        raise InvalidMessage(f"Field 'target.url' may not point at {host}: use a public host")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return  # a name: its addresses are checked when the webhook is called
    if not public_address(host):
        raise InvalidMessage(
            f"Field 'target.url' may not point at the private address {host} "
            "(allowed only with TRIGGER_PRIVATE_WEBHOOKS)"
        )
