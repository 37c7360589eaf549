"""Who may call the routes meant for tools and operators, not for the public: a bearer token
(``Authorization: Bearer …``) compared in constant time, or, for ``/metrics`` when no token is
set, a client on this host (the connection's peer address; ``X-Forwarded-For`` is never taken
for the client's address, anyone can write it; its presence only says a proxy passed the
request on)."""

from __future__ import annotations

import ipaddress

from aiohttp import web
from pydantic import SecretStr

from adapters.webhook_auth import secrets_equal

UNAUTHORIZED_HEADERS = {"WWW-Authenticate": "Bearer"}


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def bearer_matches(request: web.Request, expected: SecretStr) -> bool:
    return secrets_equal(
        bearer_token(request.headers.get("Authorization")), expected.get_secret_value()
    )


def is_loopback(address: str | None) -> bool:
    """127.0.0.0/8, ::1 and ::ffff:127.x; anything else (or nothing, or not an address) is not."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def forwarded(request: web.Request) -> bool:
    """Whether a proxy passed the request on (it adds ``X-Forwarded-For`` or ``Forwarded``)."""
    return "X-Forwarded-For" in request.headers or "Forwarded" in request.headers


def metrics_refusal(
    token: SecretStr | None, authorization: str | None, peer: str | None, *, proxied: bool
) -> int | None:
    """Why ``/metrics`` is refused (401: the token is set and not given; 403: no token is set
    and the client is not on this host), or None: it may read them. An empty token is none.

    Without a token, a reverse proxy on this host connects from loopback too: a request it
    passed on (``proxied``: it carries ``X-Forwarded-For``) is refused, whoever sent it, so
    the metrics are for a scraper that connects to tuvan itself, not through the proxy."""
    if token is not None and token.get_secret_value():
        given = bearer_token(authorization)
        return None if secrets_equal(given, token.get_secret_value()) else 401
    return None if is_loopback(peer) and not proxied else 403
