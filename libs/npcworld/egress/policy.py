"""Where outgoing webhook requests may go: the address policy and the operator's allow-list (pure).

A receiver must be a public address. Loopback, private, shared (CGNAT), link-local, unique-local,
multicast, unspecified and reserved addresses, their IPv4-mapped and IPv4-embedding IPv6 forms, and the
cloud metadata endpoints are refused, unless ``WEBHOOK_ALLOW_HOSTS`` names the host or the address.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "AllowList",
    "IpAddress",
    "address_refusal",
    "literal_address",
    "name_refusal",
    "parse_allow_list",
    "url_refusal",
]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Instance metadata services hand out cloud credentials: named apart from "link-local" so a refusal says so.
_METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "168.63.129.16")
)
_METADATA_NAMES = frozenset(
    ("metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal")
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HOST_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$")


@dataclass(frozen=True)
class AllowList:
    """Development receivers let through despite the policy: host names (exact) and IP networks."""

    names: frozenset[str] = frozenset()
    networks: tuple[IpNetwork, ...] = ()

    def allows_name(self, host: str) -> bool:
        return _normal(host) in self.names

    def allows_address(self, address: IpAddress) -> bool:
        return any(address in net for net in self.networks if net.version == address.version)


def parse_allow_list(text: str) -> AllowList:
    """Parse ``WEBHOOK_ALLOW_HOSTS``: comma-separated host names, IP addresses or CIDR networks.

    Raises:
        ValueError: an entry is neither a network nor a valid host name (the setting fails at start).
    """
    names: set[str] = set()
    networks: list[IpNetwork] = []
    for raw in text.split(","):
        entry = raw.strip().strip("[]")
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if not _HOST_NAME.match(_normal(entry)):
                raise ValueError(f"{raw.strip()!r} is neither a host name, an IP nor a CIDR") from None
            names.add(_normal(entry))
    return AllowList(frozenset(names), tuple(networks))


def address_refusal(address: IpAddress) -> str | None:
    """Why a receiver may not be at ``address`` (e.g. ``"loopback address"``), or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            why = address_refusal(embedded)
            return f"{why} (IPv4 inside IPv6)" if why else None
    checks: tuple[tuple[bool, str], ...] = (
        (address in _METADATA_ADDRESSES, "cloud metadata address"),
        (address.is_unspecified, "unspecified address"),
        (address.is_loopback, "loopback address"),
        (address.is_link_local, "link-local address"),
        (address.version == 6 and address in _UNIQUE_LOCAL, "unique-local address"),
        (address.is_multicast, "multicast address"),
        (address.version == 4 and address in _SHARED, "shared (CGNAT) address"),
        (address == _BROADCAST, "broadcast address"),
        (address.is_reserved, "reserved address"),
        (address.is_private, "private address"),
        (not address.is_global, "address that is not publicly routable"),
    )
    return next((why for refused, why in checks if refused), None)


def name_refusal(host: str) -> str | None:
    """Why a receiver may not be at host name ``host`` before resolving it (metadata service names, and
    ``localhost`` with every name under it, which resolve to loopback by definition: RFC 6761)."""
    name = _normal(host)
    if name in _METADATA_NAMES:
        return "cloud metadata host"
    if name == "localhost" or name.endswith(".localhost"):
        return "loopback host name"
    return None


def url_refusal(url: str, allow: AllowList) -> str | None:
    """What is wrong with ``url`` as a receiver, judged without DNS (literal addresses, names, userinfo).

    A host name that passes still has to resolve to addresses that pass ``address_refusal``.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "only http and https receivers are allowed"
    if parts.username is not None or parts.password is not None:
        return "credentials in the URL are not allowed (use the signature to authenticate deliveries)"
    host = parts.hostname
    if not host:
        return "the URL has no host"
    literal = literal_address(host)
    if literal is not None:
        if allow.allows_address(literal):
            return None
        why = address_refusal(literal)
        return f"{host} is a {why}" if why else None
    if allow.allows_name(host):
        return None
    why = name_refusal(host)
    return f"{host} is a {why}" if why else None


def literal_address(host: str) -> IpAddress | None:
    """The address when ``host`` is an IP literal (brackets and an IPv6 zone id dropped), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64 well-known prefix), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _normal(host: str) -> str:
    return host.strip().lower().rstrip(".")
