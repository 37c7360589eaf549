"""The admin's guard over real HTTP: every route needs a login, CSRF on every state change,
roles, security headers, and escaping of what users typed."""

from __future__ import annotations

import re

import pytest
from aiohttp.web_urldispatcher import StaticResource

from admin.app import create_admin_app
from admin.web import is_public, required_role
from bot.db.models import StaffRole
from tests.admin._support import AdminBrowser, NewBrowser
from tests.fakes.raw_http import raw_post


def admin_routes() -> list[tuple[str, str, object]]:
    """(method, a concrete path, handler) for every route of the sub-app except static files;
    path parameters are filled with 1 (the guard answers before any lookup)."""
    app = create_admin_app()
    found = []
    for route in app.router.routes():
        resource = route.resource
        if resource is None or isinstance(resource, StaticResource):
            continue
        info = resource.get_info()
        template = info.get("formatter") or info.get("path")
        assert isinstance(template, str)
        path = "/admin" + re.sub(r"\{[^}]+\}", "1", template)
        found.append((route.method, path, route.handler))
    return found


ROUTES = admin_routes()
PUBLIC = {"/admin/login", "/admin/lang/1"}  # the only pages a visitor may see
UNSAFE = [(m, p, h) for m, p, h in ROUTES if m not in ("GET", "HEAD")]


def test_the_route_list_covers_the_pages() -> None:
    paths = {p for _, p, _ in ROUTES}
    for page in ("/admin/faq", "/admin/users", "/admin/login", "/admin/dashboard"):
        assert page in paths
    assert len(UNSAFE) >= 5


@pytest.mark.parametrize(
    ("method", "path", "handler"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES]
)
async def test_every_route_refuses_a_visitor_who_is_not_signed_in(
    browser: NewBrowser, method: str, path: str, handler: object
) -> None:
    visitor = browser()
    async with visitor.http.request(method, visitor.url(path), allow_redirects=False) as response:
        await response.read()
    if method in ("GET", "HEAD"):
        if is_public(handler):
            assert path in PUBLIC, f"{path} is reachable signed out"
            assert response.status in (200, 404)  # the form; /lang/1 is not a language
            assert "tuvan_admin" not in response.cookies
        else:
            assert response.status == 303
            assert response.headers["Location"].startswith("/admin/login?next=")
    else:
        assert response.status == 403  # the login form too, without its token


@pytest.mark.parametrize(
    ("method", "path", "handler"), UNSAFE, ids=[f"{m} {p}" for m, p, _ in UNSAFE]
)
async def test_a_viewer_may_not_change_anything(
    viewer: AdminBrowser, method: str, path: str, handler: object
) -> None:
    if is_public(handler) or required_role(handler, method) == StaffRole.viewer:
        pytest.skip("open to viewers (logout) or to visitors (login)")
    response = await viewer.post(path, {"question": "x", "answer": "y"})
    assert response.status == 403


async def test_an_editor_may_not_manage_accounts(editor: AdminBrowser) -> None:
    assert (await editor.get("/admin/users")).status == 403
    response = await editor.post(
        "/admin/users", {"email": "new@shut.example.vn", "password": "a" * 12, "role": "admin"}
    )
    assert response.status == 403
    assert "nav-users" not in await editor.page("/admin/try")


async def test_post_without_or_with_a_wrong_csrf_token_is_refused(admin: AdminBrowser) -> None:
    form = {"email": "x@shut.example.vn", "password": "long enough pw", "role": "viewer"}
    assert (await admin.post("/admin/users", form, csrf="")).status == 403
    # the token with its last character changed (to another one: it may end in "A" already)
    forged = admin.csrf[:-1] + ("B" if admin.csrf.endswith("A") else "A")
    assert (await admin.post("/admin/users", form, csrf=forged)).status == 403
    page = await admin.page("/admin/users")
    assert "x@shut.example.vn" not in page
    # the right token, sent as a header instead of a form field, is accepted
    response = await admin.post("/admin/users", form, csrf="", headers={"X-CSRF-Token": admin.csrf})
    assert response.status == 303
    assert "x@shut.example.vn" in await admin.page("/admin/users")


async def test_another_sessions_csrf_token_is_refused(
    admin: AdminBrowser, signed_in: object
) -> None:
    other = await signed_in(StaffRole.admin)  # type: ignore[operator]
    form = {"email": "y@shut.example.vn", "password": "long enough pw", "role": "viewer"}
    assert (await admin.post("/admin/users", form, csrf=other.csrf)).status == 403


async def test_pages_carry_the_security_headers(viewer: AdminBrowser) -> None:
    for path in ("/admin/try", "/admin/login", "/admin/static/admin.css", "/admin/nowhere"):
        response = await viewer.get(path)
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Referrer-Policy"] == "same-origin"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    page = await viewer.page("/admin/try")
    assert "<script>" not in page  # no inline script: the CSP would block it anyway
    assert "style=" not in page


async def test_an_unknown_admin_page_is_a_polite_404(viewer: AdminBrowser) -> None:
    response = await viewer.get("/admin/nowhere")
    assert response.status == 404
    assert "Không tìm thấy" in await response.text()


async def test_a_csrf_header_that_is_not_utf8_is_refused_not_an_error(
    admin: AdminBrowser, browser: NewBrowser
) -> None:
    visitor = browser()
    server = visitor.server
    await visitor.get("/admin/login")  # the login form's token cookie, to compare against
    cookies = "; ".join(f"{c.key}={c.value}" for c in visitor.http.cookie_jar)
    not_utf8 = b"X-CSRF-Token: \xff\r\n"  # one byte 0xff on the wire
    form = b"email=y%40shut.example.vn&password=long+enough+pw"
    headers = not_utf8 + b"Content-Type: application/x-www-form-urlencoded\r\n"
    headers += f"Cookie: {cookies}\r\n".encode()
    assert await raw_post(server.host, server.port, "/admin/login", headers, form) == 403


async def test_a_csrf_form_value_and_cookies_that_are_not_utf8_are_refused_not_an_error(
    admin: AdminBrowser, browser: NewBrowser
) -> None:
    server = browser().server
    form = b"csrf_token=%FF&email=y%40shut.example.vn&password=long+enough+pw"
    headers = b"Content-Type: application/x-www-form-urlencoded\r\n"
    headers += b"Cookie: tuvan_admin_login=\xff; tuvan_admin=\xff\r\n"
    assert await raw_post(server.host, server.port, "/admin/login", headers, form) == 403


async def test_a_broken_multipart_login_is_a_400_not_an_error(
    admin: AdminBrowser, browser: NewBrowser
) -> None:
    server = browser().server
    headers = b"Content-Type: multipart/form-data; boundary=xyz\r\n"
    body = b'--xyz\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\nabc'  # no end
    assert await raw_post(server.host, server.port, "/admin/login", headers, body) == 400
