"""Cross-origin calls to the chat API: allowed from the sites in ``TUVAN_WEB__ALLOWED_ORIGINS``
(exact match), from no other."""

from __future__ import annotations

from aiohttp import web

from bot.core.settings import Settings


def cors_headers(request: web.Request, settings: Settings) -> dict[str, str]:
    """CORS headers for an allowed origin, none for any other."""
    origin = request.headers.get("Origin")
    if origin is None or origin not in settings.web.allowed_origins:
        return {"Vary": "Origin"}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


def preflight_headers(request: web.Request, settings: Settings) -> dict[str, str] | None:
    """The answer to an OPTIONS preflight from an allowed origin; None: refuse it."""
    cors = cors_headers(request, settings)
    if "Access-Control-Allow-Origin" not in cors:
        return None
    return cors | {
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
        # X-Visitor-Id: GET /api/chat/history takes the visitor id there, not in its URL.
        "Access-Control-Allow-Headers": "Content-Type, X-Visitor-Id",
        "Access-Control-Max-Age": "600",
    }
