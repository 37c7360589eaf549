"""The admin's one guard, run before every handler of the sub-app.

In order: the language cookie; static files pass; the session cookie names the staff member;
a handler not marked ``@public`` needs a login (GET → redirect to the login page, anything else
→ 403); every POST/PUT/PATCH/DELETE carries the session's CSRF token (form field ``csrf_token``
or header ``X-CSRF-Token``, compared in constant time) → 403 otherwise; then the handler's role.
The login form, before any session exists, is protected by a double-submit token instead: a
cookie and the form field must match.

Errors become the admin's own polite pages here, at the edge; every response gets the security
headers (a CSP without inline scripts, no framing, no referrer outside the site).
"""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.web_urldispatcher import StaticResource
from sqlalchemy.exc import SQLAlchemyError

from adapters.webhook_auth import secrets_equal
from admin.accounts import identify
from admin.i18n import DEFAULT_LANGUAGE, LANGUAGES
from admin.web import (
    LANG,
    LANG_COOKIE,
    SESSION_COOKIE,
    STAFF,
    Handler,
    is_public,
    render,
    required_role,
    runtime,
)

log = logging.getLogger(__name__)

LOGIN_CSRF_COOKIE = "tuvan_admin_login"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


async def submitted_token(request: web.Request) -> str | None:
    header = request.headers.get("X-CSRF-Token")
    if header:
        return header
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        try:
            form = await request.post()
        except ValueError:  # a broken multipart body, or one that is not the form it says
            raise web.HTTPBadRequest(text="the form could not be read") from None
        value = form.get("csrf_token")
        return value if isinstance(value, str) else None
    return None


async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    lang = request.cookies.get(LANG_COOKIE, DEFAULT_LANGUAGE)
    request[LANG] = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
    route = request.match_info.route
    if isinstance(route.resource, StaticResource):
        return await handler(request)
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        async with runtime(request).sessionmaker() as session:
            identity = await identify(session, token)
        if identity is not None:
            request[STAFF] = identity
    target = request.match_info.handler
    unsafe = request.method not in SAFE_METHODS
    if is_public(target):
        if unsafe and not secrets_equal(
            await submitted_token(request), request.cookies.get(LOGIN_CSRF_COOKIE, "")
        ):
            raise web.HTTPForbidden()
        return await handler(request)
    identity = request.get(STAFF)
    if identity is None:
        if unsafe:
            raise web.HTTPForbidden()
        login = request.app.router["admin.login"].url_for().with_query(next=request.path_qs)
        raise web.HTTPSeeOther(str(login))
    if unsafe and not secrets_equal(await submitted_token(request), identity.csrf_token):
        raise web.HTTPForbidden()
    if not identity.may(required_role(target, request.method)):
        raise web.HTTPForbidden()
    return await handler(request)


async def error_page(request: web.Request, status: int) -> web.Response:
    return await render(request, "error.html", {"status": status}, status=status)


@web.middleware
async def admin_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await _guard(request, handler)
    except web.HTTPException as exc:
        if exc.status < 400:
            exc.headers.update(SECURITY_HEADERS)
            raise
        response = await error_page(request, exc.status)
    except (SQLAlchemyError, OSError) as exc:
        log.error("admin: database unavailable: %s", exc)
        response = await error_page(request, 503)
    response.headers.update(SECURITY_HEADERS)
    if not isinstance(request.match_info.route.resource, StaticResource):
        response.headers.setdefault("Cache-Control", "no-store")
    return response
