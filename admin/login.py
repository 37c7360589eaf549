"""Logging in and out, and the language switch."""

from __future__ import annotations

import secrets

from aiohttp import web

from admin.accounts import close_session, sign_in
from admin.i18n import LANGUAGES
from admin.middleware import LOGIN_CSRF_COOKIE
from admin.web import (
    LANG_COOKIE,
    SESSION_COOKIE,
    STAFF,
    field,
    form,
    local_path,
    public,
    redirect,
    render,
    requires,
    runtime,
    url,
)
from bot.core.client_address import client_address
from bot.core.errors import LoginThrottledError
from bot.core.settings import AdminSettings
from bot.db.models import StaffRole

COOKIE_PATH = "/admin"


def cookie_secure(request: web.Request, settings: AdminSettings) -> bool:
    if settings.cookie_secure or request.secure:
        return True
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[-1].strip().lower()
    return settings.trust_proxy and forwarded == "https"


def client_ip(request: web.Request, settings: AdminSettings) -> str:
    """The address the per-IP login limit counts: the proxy's last X-Forwarded-For hop when
    ``trust_proxy`` is set (the hop it appended itself), else the peer."""
    return client_address(
        request.remote, request.headers.get("X-Forwarded-For"), trust_proxy=settings.trust_proxy
    )


def _next(request: web.Request, value: str | None) -> str:
    return local_path(value, url(request, "admin.home"))


@public
async def login_page(request: web.Request) -> web.Response:
    if request.get(STAFF) is not None:
        raise web.HTTPSeeOther(_next(request, request.query.get("next")))
    return await _login_form(request)


async def _login_form(
    request: web.Request, *, email: str = "", failed: bool = False, status: int = 200
) -> web.Response:
    settings = runtime(request).settings.admin
    token = request.cookies.get(LOGIN_CSRF_COOKIE) or secrets.token_urlsafe(32)
    response = await render(
        request,
        "login.html",
        {
            "login_token": token,
            "email": email,
            "failed": failed,
            "next": _next(request, request.query.get("next")),
        },
        status=status,
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        path=COOKIE_PATH,
        httponly=True,
        samesite="Lax",
        secure=cookie_secure(request, settings),
    )
    return response


@public
async def login(request: web.Request) -> web.Response:
    rt = runtime(request)
    settings = rt.settings.admin
    data = await form(request)
    email = field(data, "email", 320)
    password = data.get("password")
    password = password if isinstance(password, str) else ""
    ip = client_ip(request, settings)
    network = rt.settings.limits.network_of(ip)
    try:
        token = await sign_in(rt.sessionmaker, settings, email, password, ip, network)
    except LoginThrottledError:
        return await render(
            request,
            "error.html",
            {"status": 429, "minutes": settings.login_window_minutes},
            status=429,
        )
    if token is None:
        return await _login_form(request, email=email, failed=True, status=401)
    response = web.HTTPSeeOther(_next(request, field(data, "next", 2000)))
    response.set_cookie(
        SESSION_COOKIE,
        token,
        path=COOKIE_PATH,
        max_age=int(settings.session_hours * 3600),
        httponly=True,
        samesite="Lax",
        secure=cookie_secure(request, settings),
    )
    response.del_cookie(LOGIN_CSRF_COOKIE, path=COOKIE_PATH)
    raise response


@requires(StaffRole.viewer)
async def logout(request: web.Request) -> web.Response:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        async with runtime(request).sessionmaker.begin() as session:
            await close_session(session, token)
    response = web.HTTPSeeOther(url(request, "admin.login", {"msg": "logged_out"}))
    response.del_cookie(SESSION_COOKIE, path=COOKIE_PATH)
    raise response


@public
async def switch_language(request: web.Request) -> web.Response:
    """A GET: it changes only what this browser shows, nothing on the server."""
    lang = request.match_info["lang"]
    if lang not in LANGUAGES:
        raise web.HTTPNotFound()
    response = web.HTTPSeeOther(_next(request, request.query.get("next")))
    response.set_cookie(
        LANG_COOKIE, lang, path=COOKIE_PATH, max_age=365 * 86400, samesite="Lax", httponly=True
    )
    raise response


async def home(request: web.Request) -> web.Response:
    """The landing page after login: the dashboard (how the bot is doing, what it missed)."""
    redirect(request, "admin.dashboard")


def setup(app: web.Application) -> None:
    app.router.add_get("/", home, name="admin.home")
    app.router.add_get("/login", login_page, name="admin.login")
    app.router.add_post("/login", login, name="admin.login_post")
    app.router.add_post("/logout", logout, name="admin.logout")
    app.router.add_get("/lang/{lang}", switch_language, name="admin.lang")
