"""Where a webhook may point: on AWS only https to public addresses (no SSRF into the VPC,
loopback or the link-local metadata service), unless the deployment allows private ones
(``TRIGGER_PRIVATE_WEBHOOKS``; the local stack does, so webhooks reach 127.0.0.1). Pure:
the names a URL's host resolves to are checked by the webhook adapter when it sends
(``public_address``), since they may change after the trigger is stored; it then connects
to the very address it checked (no second lookup a DNS rebinding could answer)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from magnetar_core.domain.errors import InvalidMessage

LOCAL_NAMES = ("localhost", "localhost.localdomain")


NAT64_PREFIXES = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
"""Translators' prefixes (RFC 6052, RFC 8215): the address's last 32 bits are an IPv4
address the translator connects to."""
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
"""Deprecated IPv4-compatible IPv6 addresses (``::a.b.c.d``)."""


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to: mapped, 6to4, Teredo (server and
    client), NAT64 and IPv4-compatible forms."""
    found = [v4 for v4 in (ip.ipv4_mapped, ip.sixtofour) if v4 is not None]
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if any(ip in prefix for prefix in NAT64_PREFIXES) or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def public_address(address: str) -> bool:
    """Whether an IP address (text) is a public, routable one (not private, loopback,
    link-local, multicast, reserved or unspecified), also through every IPv4 address an
    IPv6 one embeds (NAT64 and 6to4 addresses reach the IPv4 address inside them)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if ip.ipv4_mapped is not None:
            return public_address(str(ip.ipv4_mapped))
        if embedded and not all(v4.is_global and not v4.is_multicast for v4 in embedded):
            return False
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
