"""Which network addresses ingestion may fetch from: public ones, and the private hosts an operator
allowed by name.

A crawled page, a redirect or a linked file can point anywhere, including at the machine tuvan
runs on (a database console on another port) or at the cloud metadata service. So every address
a fetch would connect to is classified first: loopback, private (RFC 1918, fc00::/7), link-local
(169.254/16 with 169.254.169.254, fe80::/10), unspecified, multicast, reserved, shared (CGNAT
100.64/10) and other special-use ranges are refused, as are IPv4 addresses carried inside IPv6
(mapped ``::ffff:a.b.c.d``, 6to4, NAT64) whose IPv4 address would be refused.

A university's intranet site on 10.x is legitimate: ``PrivateHostAllowList`` holds the hosts
(``host`` or ``host:port``, as written in the URL) that may resolve to such addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_RFC1918 = tuple(
    ipaddress.IPv4Network(net) for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # RFC 6598, carrier-grade NAT
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")  # RFC 4193
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052: the last 32 bits are IPv4
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated (RFC 4291); :: and ::1 are in it


def address_refusal(address: IPAddress) -> str | None:
    """Why ingestion must not connect to ``address`` ("loopback", "private"...), or None when
    it is a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            reason = address_refusal(embedded)
            return f"{reason} (IPv4 {embedded} inside IPv6)" if reason else None
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"  # 169.254.169.254: the cloud metadata service
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address):
        if any(address in net for net in _RFC1918):
            return "private (RFC 1918)"
        if address in _SHARED:
            return "shared (CGNAT 100.64.0.0/10)"
    elif address.is_site_local:
        return "site-local"
    elif address in _UNIQUE_LOCAL:
        return "private (unique local fc00::/7)"
    if address.is_reserved:
        return "reserved"
    if address.is_private or not address.is_global:
        # Documentation, benchmarking, protocol-assignment ranges and the like.
        return "special-use, not globally routable"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def parse_address(host: str) -> IPAddress | None:
    """``host`` as an IP address (brackets and an IPv6 zone dropped), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


class PrivateHostAllowList:
    """The hosts an operator allows to resolve to non-public addresses: entries ``host`` (any
    port) or ``host:port``, IPv6 addresses in brackets (``IngestSettings`` writes them so),
    matched against the URL's host as written, a name or an address, and its port."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries = frozenset(entry.strip().lower() for entry in entries)

    def allows(self, host: str, port: int) -> bool:
        name = host.lower().strip("[]").rstrip(".")
        name = f"[{name}]" if ":" in name else name
        return name in self.entries or f"{name}:{port}" in self.entries
