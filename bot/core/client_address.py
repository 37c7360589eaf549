"""The address a request comes from, as the per-address limits count it (the admin's login
limit, the web chat's bucket): the peer, or the hop a trusted reverse proxy appended to
``X-Forwarded-For``. Framework-free, so that every layer that limits by address shares it."""

from __future__ import annotations

import ipaddress


def client_address(peer: str | None, forwarded_for: str | None, *, trust_proxy: bool) -> str:
    """The client's address: with ``trust_proxy``, the last ``X-Forwarded-For`` hop (the one
    the proxy appended itself; the earlier ones are whatever the client sent), else the peer."""
    if trust_proxy and forwarded_for:
        forwarded = forwarded_for.split(",")[-1].strip()
        if forwarded:
            return forwarded
    return peer or "unknown"


def client_network(address: str, *, v4_prefix: int, v6_prefix: int) -> str | None:
    """The network ``address`` belongs to, as the per-network limits count it ("203.0.113.0/24",
    "2001:db8:1:2::/64"): a client that rotates its address inside the block a provider gives
    one customer (an IPv6 /64) is still one client there. None for what is not an address."""
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    prefix = v4_prefix if parsed.version == 4 else v6_prefix
    return str(ipaddress.ip_network(f"{parsed}/{prefix}", strict=False))
