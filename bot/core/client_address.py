"""The address a request comes from, as the per-address limits count it (the admin's login
limit, the web chat's bucket): the peer, or the hop a trusted reverse proxy appended to
``X-Forwarded-For``. Framework-free, so that every layer that limits by address shares it."""

from __future__ import annotations


def client_address(peer: str | None, forwarded_for: str | None, *, trust_proxy: bool) -> str:
    """The client's address: with ``trust_proxy``, the last ``X-Forwarded-For`` hop (the one
    the proxy appended itself; the earlier ones are whatever the client sent), else the peer."""
    if trust_proxy and forwarded_for:
        forwarded = forwarded_for.split(",")[-1].strip()
        if forwarded:
            return forwarded
    return peer or "unknown"
