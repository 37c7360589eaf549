"""What a chat request must pass before anything is spent on it: a JSON body sent from the
page's own origin or an allowed one, and a token from the buckets of its address, of its
network (an IPv4 /24, an IPv6 /64: a client rotating addresses inside its block is one client
there) and of its visitor (``bot.web.rate_limits``, shared by every serve process). The page's
reads (history, updates) and votes take tokens from buckets of their own, so reading never eats
the questions' allowance.

A browser sends ``Origin`` with every cross-origin POST: a form or ``fetch`` of any other site
with a "simple" ``text/plain`` body needs no preflight, so CORS alone would not keep it from
being answered and stored. Requiring ``application/json`` makes such a request preflighted (and
the preflight is refused); checking ``Origin`` refuses it even so.
"""

from __future__ import annotations

from aiohttp import web
from yarl import URL

from bot.core.client_address import client_address
from bot.core.settings import Settings
from bot.runtime import Runtime
from bot.web.rate_limits import RateLimit, RateLimiter

TOO_FAST = "too many questions in a short time; wait a moment and send it again"
HELD = "your earlier questions are still being answered; send this one again once they are"
BUSY = "the chat is busy; try again in a moment"


def own_origin(request: web.Request, origin: str) -> bool:
    """Whether ``origin`` is the page's own: the same host and port as the request's ``Host``
    (the scheme is left out: behind a TLS proxy the request arrives over plain HTTP)."""
    try:
        url = URL(origin)
    except ValueError:
        return False
    if url.scheme not in ("http", "https") or not url.host or url.path not in ("", "/"):
        return False
    authority = url.host if url.explicit_port is None else f"{url.host}:{url.explicit_port}"
    return authority.lower() == request.host.lower()


def client_gone(request: web.Request) -> bool:
    """Whether the client closed the connection (the server does not cancel the handler)."""
    transport = request.transport
    return transport is None or transport.is_closing()


class Admission:
    def __init__(self) -> None:
        self.limiter = RateLimiter()

    def refusal(self, request: web.Request, settings: Settings) -> tuple[int, str] | None:
        """A status and message when the request is not the page's JSON from an allowed
        origin; None when it is."""
        if request.content_type != "application/json":
            return 415, "the body must be JSON, sent with Content-Type: application/json"
        origin = request.headers.get("Origin")
        if origin is not None and not (
            origin in settings.web.allowed_origins or own_origin(request, origin)
        ):
            return 403, "this origin may not use the chat API"
        return None

    async def take_by_address(
        self, request: web.Request, runtime: Runtime, route: str = "chat"
    ) -> float | None:
        """A token of the client address's bucket and of its network's for ``route`` ("chat",
        "vote" or "reads"): None, or the seconds to wait for one."""
        limits = runtime.settings.limits
        address = self.address(request, runtime)
        if route == "reads":
            by_address = RateLimit(limits.reads_ip_per_minute, limits.reads_ip_burst)
            by_network = RateLimit(limits.reads_network_per_minute, limits.reads_network_burst)
        else:
            by_address = RateLimit(limits.chat_ip_per_minute, limits.chat_ip_burst)
            by_network = RateLimit(limits.chat_network_per_minute, limits.chat_network_burst)
        network = limits.network_of(address)
        buckets = [(f"{route}-ip:{address}", by_address)]
        if network is not None:
            buckets.append((f"{route}-net:{network}", by_network))
        async with runtime.sessionmaker.begin() as session:
            for key, limit in buckets:
                wait_s = await self.limiter.take(session, key[:200], limit)  # the column's width
                if wait_s is not None:
                    return wait_s
        return None

    def address(self, request: web.Request, runtime: Runtime) -> str:
        """The client's address, as the limits count it (``bot.core.client_address``)."""
        return client_address(
            request.remote,
            request.headers.get("X-Forwarded-For"),
            trust_proxy=runtime.settings.admin.trust_proxy,
        )

    async def take_by_visitor(self, runtime: Runtime, visitor_id: str) -> float | None:
        """A token of the visitor's bucket: None, or the seconds to wait for one."""
        limits = runtime.settings.limits
        limit = RateLimit(limits.chat_visitor_per_minute, limits.chat_visitor_burst)
        return await self._take(runtime, f"chat-visitor:{visitor_id}", limit)

    async def _take(self, runtime: Runtime, key: str, limit: RateLimit) -> float | None:
        async with runtime.sessionmaker.begin() as session:
            return await self.limiter.take(session, key[:200], limit)  # the column's width
