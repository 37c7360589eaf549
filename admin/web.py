"""What every admin page handler uses: who is signed in, roles, rendering, forms, redirects.

A handler states the least role it needs with ``@requires(StaffRole.editor)``; without it a GET
needs ``viewer`` and any other method ``editor`` (fail closed). ``@public`` marks the few
handlers a visitor may reach signed out (the login form, the language switch). The middleware
(admin.middleware) reads these marks from the matched route's handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import aiohttp_jinja2
from aiohttp import web
from multidict import MultiDictProxy
from sqlalchemy.exc import SQLAlchemyError

from admin.accounts import StaffIdentity
from admin.attention import needs_attention_count
from admin.i18n import DEFAULT_LANGUAGE, LANGUAGES, Translator
from admin.keys import JINJA
from bot.db.models import StaffRole
from bot.keys import RUNTIME
from bot.runtime import Runtime

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
H = TypeVar("H", bound=Handler)

STAFF = web.RequestKey("admin_staff", StaffIdentity)
LANG = web.RequestKey("admin_lang", str)

LANG_COOKIE = "tuvan_admin_lang"
SESSION_COOKIE = "tuvan_admin"
PAGE_SIZE = 25


# -- roles ----------------------------------------------------------------------------------------


def requires(role: StaffRole) -> Callable[[H], H]:
    """The least role that may call this handler (checked by the middleware before it runs)."""

    def mark(handler: H) -> H:
        handler.admin_role = role  # type: ignore[attr-defined]
        return handler

    return mark


def public(handler: H) -> H:
    """Reachable signed out (the login page); a POST still needs its CSRF token."""
    handler.admin_public = True  # type: ignore[attr-defined]
    return handler


def required_role(handler: object, method: str) -> StaffRole:
    role = getattr(handler, "admin_role", None)
    if isinstance(role, StaffRole):
        return role
    return StaffRole.viewer if method in ("GET", "HEAD") else StaffRole.editor


def is_public(handler: object) -> bool:
    return bool(getattr(handler, "admin_public", False))


# -- the request ----------------------------------------------------------------------------------


def runtime(request: web.Request) -> Runtime:
    return request.config_dict[RUNTIME]


def me(request: web.Request) -> StaffIdentity:
    """The signed-in staff member (the middleware lets no one else reach a guarded handler)."""
    if STAFF not in request:
        raise web.HTTPForbidden()
    return request[STAFF]


def language(request: web.Request) -> str:
    return str(request.get(LANG, DEFAULT_LANGUAGE))


def translator(request: web.Request) -> Translator:
    return Translator(language(request))


async def form(request: web.Request) -> MultiDictProxy[str | bytes | bytearray | web.FileField]:
    return await request.post()


def field(data: Mapping[str, Any], name: str, limit: int = 20_000) -> str:
    """A text field of a form, stripped; files and missing fields read as empty."""
    value = data.get(name)
    if not isinstance(value, str):
        return ""
    return value.replace("\x00", "").replace("\r\n", "\n").strip()[:limit]


def int_param(value: str | None, default: int, *, low: int = 1, high: int = 1_000_000) -> int:
    try:
        number = int(value or "")
    except ValueError:
        return default
    return min(max(number, low), high)


def url(
    request: web.Request, route: str, query: Mapping[str, str] | None = None, **parts: Any
) -> str:
    found = request.app.router[route].url_for(**{k: str(v) for k, v in parts.items()})
    if query:
        found = found.with_query({k: v for k, v in query.items() if v != ""})
    return str(found)


def redirect(
    request: web.Request, route: str, query: Mapping[str, str] | None = None, **parts: Any
) -> NoReturn:
    """303 See Other: after a POST the browser GETs the result (no resubmission on reload)."""
    raise web.HTTPSeeOther(url(request, route, query, **parts))


def local_path(target: str | None, fallback: str) -> str:
    """``target`` if it is a path inside /admin, else ``fallback`` (no open redirects)."""
    if (
        target
        and target.startswith("/admin")
        and not target.startswith("//")
        and "\\" not in target
        and all(ord(c) > 31 for c in target)
    ):
        return target
    return fallback


# -- navigation and rendering -------------------------------------------------------------------


@dataclass(frozen=True)
class NavItem:
    """One entry of the top navigation: a route name (``admin.<key>``) and who sees it."""

    key: str
    path: str
    role: StaffRole = StaffRole.viewer

    @property
    def route(self) -> str:
        return f"admin.{self.key}"

    @property
    def label(self) -> str:
        return f"nav.{self.key}"


# Every page of the admin, in menu order; admin.app refuses to start if one has no module.
NAV: tuple[NavItem, ...] = (
    NavItem("dashboard", "/dashboard"),
    NavItem("faq", "/faq"),
    NavItem("review", "/review"),
    NavItem("tryit", "/try"),
    NavItem("recheck", "/recheck"),
    NavItem("conversations", "/conversations"),
    NavItem("documents", "/documents"),
    NavItem("catalogue", "/catalogue"),
    NavItem("stale", "/stale"),
    NavItem("users", "/users", StaffRole.admin),
)


async def _attention(request: web.Request) -> int:
    """The menu's count of conversations that need staff; 0 if the database cannot say (the
    page itself may be the error page of that)."""
    try:
        async with runtime(request).sessionmaker() as session:
            return await needs_attention_count(session)
    except SQLAlchemyError:
        return 0


async def render(
    request: web.Request,
    template: str,
    context: Mapping[str, Any] | None = None,
    *,
    status: int = 200,
) -> web.Response:
    """A page from admin/templates with what base.html needs (translator, user, menu, CSRF)."""
    lang = language(request)
    identity = request.get(STAFF)
    route = request.match_info.route.name if request.match_info.route else None
    message = request.query.get("msg", "")
    base: dict[str, Any] = {
        "t": Translator(lang),
        "lang": lang,
        "languages": LANGUAGES,
        "me": identity,
        "csrf_token": identity.csrf_token if identity else "",
        "nav": [n for n in NAV if identity is not None and identity.may(n.role)],
        "current": route or "",
        "here": request.path_qs,
        "message": f"msg.{message}" if Translator(lang).knows(f"msg.{message}") else "",
        "url": lambda name, query=None, **parts: url(request, name, query, **parts),
        "roles": list(StaffRole),
        "attention": await _attention(request) if identity is not None else 0,
    }
    return aiohttp_jinja2.render_template(
        template, request, {**base, **(context or {})}, app_key=JINJA, status=status
    )
