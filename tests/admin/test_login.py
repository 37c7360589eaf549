"""Logging in and out over real HTTP: cookies, stored sessions, wrong passwords, the rate limit,
expiry, deactivation, the language switch."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from aiohttp import ClientResponse
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.clock import utcnow
from bot.core.settings import Settings
from bot.db.models import LoginAttempt, StaffRole, StaffSession, StaffUser
from tests.admin._support import AdminBrowser, MakeStaff, NewBrowser


async def sessions_of(sm: async_sessionmaker[AsyncSession], user_id: int) -> list[StaffSession]:
    async with sm() as session:
        rows = await session.scalars(select(StaffSession).where(StaffSession.user_id == user_id))
        return list(rows)


async def test_login_sets_a_guarded_cookie_and_stores_only_its_hash(
    browser: NewBrowser, make_staff: MakeStaff, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    staff = await make_staff(StaffRole.editor, email="Co.Lan@SHUT.example.vn")
    b = browser()
    response = await b.login("  co.lan@shut.example.vn ")
    assert response.status == 303
    assert response.headers["Location"] == "/admin/"
    cookie = response.cookies["tuvan_admin"]
    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/admin"
    assert not cookie["secure"]  # TUVAN_ADMIN__COOKIE_SECURE is off by default
    [stored] = await sessions_of(sessionmaker, staff.id)
    assert stored.token_hash == hashlib.sha256(cookie.value.encode()).hexdigest()
    assert cookie.value not in (stored.token_hash, stored.csrf_token)
    assert stored.expires_at - utcnow() > timedelta(hours=11)
    assert "co.lan@shut.example.vn" in await b.page("/admin/try")


async def test_login_goes_back_to_the_page_asked_for_but_never_off_site(
    browser: NewBrowser, make_staff: MakeStaff
) -> None:
    staff = await make_staff(StaffRole.viewer)
    b = browser()
    asked = await b.get("/admin/faq?status=draft")
    assert asked.status == 303
    assert asked.headers["Location"] == "/admin/login?next=/admin/faq?status%3Ddraft"
    form = await b.page(asked.headers["Location"])
    assert 'name="next" value="/admin/faq?status=draft"' in form
    token = form.split('name="csrf_token" value="')[1].split('"')[0]
    response = await b.post(
        "/admin/login",
        {"email": staff.email, "password": staff.password, "next": "/admin/faq?status=draft"},
        csrf=token,
    )
    assert response.headers["Location"] == "/admin/faq?status=draft"
    for evil in ("https://evil.example/", "//evil.example/admin", "/admin\\@evil"):
        switch = await b.get(f"/admin/lang/en?next={evil}")
        assert switch.headers["Location"] == "/admin/"


async def test_wrong_password_is_refused_without_a_session(
    browser: NewBrowser, make_staff: MakeStaff, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    staff = await make_staff(StaffRole.admin)
    b = browser()
    response = await b.login(staff.email, "not the password")
    assert response.status == 401
    assert "tuvan_admin" not in response.cookies
    assert await sessions_of(sessionmaker, staff.id) == []
    assert (await b.get("/admin/faq")).status == 303
    unknown = await b.login("nobody@shut.example.vn", "whatever it is")
    assert unknown.status == 401


async def test_deactivated_account_cannot_log_in(
    browser: NewBrowser, make_staff: MakeStaff
) -> None:
    staff = await make_staff(StaffRole.admin, active=False)
    assert (await browser().login(staff.email)).status == 401


async def test_logout_deletes_the_session_and_the_old_cookie_stops_working(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token = editor.http.cookie_jar.filter_cookies(editor.server.make_url("/admin/"))[
        "tuvan_admin"
    ].value
    response = await editor.post("/admin/logout")
    assert response.status == 303
    assert response.headers["Location"] == "/admin/login?msg=logged_out"
    async with sessionmaker() as session:
        digest = hashlib.sha256(token.encode()).hexdigest()
        assert await session.get(StaffSession, digest) is None
    editor.http.cookie_jar.update_cookies({"tuvan_admin": token}, editor.server.make_url("/admin/"))
    assert (await editor.get("/admin/faq")).status == 303


async def test_an_expired_session_leads_back_to_the_login(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker.begin() as session:
        await session.execute(
            update(StaffSession).values(expires_at=utcnow() - timedelta(seconds=1))
        )
    response = await editor.get("/admin/try")
    assert response.status == 303
    assert response.headers["Location"].startswith("/admin/login")


async def test_deactivating_an_account_ends_its_sessions(
    editor: AdminBrowser, admin: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        editor_id = await session.scalar(
            select(StaffUser.id).where(StaffUser.role == StaffRole.editor)
        )
    response = await admin.post(f"/admin/users/{editor_id}/deactivate")
    assert response.status == 303
    assert (await editor.get("/admin/try")).status == 303


async def test_five_failures_lock_the_email_even_for_the_right_password(
    browser: NewBrowser, make_staff: MakeStaff, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    staff = await make_staff(StaffRole.editor)
    b = browser()
    for _ in range(5):
        assert (await b.login(staff.email, "wrong password")).status == 401
    locked = await b.login(staff.email)
    assert locked.status == 429
    assert "15" in await locked.text()
    # the attempts are rows: another web process sees the same count
    async with sessionmaker() as session:
        failures = await session.scalar(
            select(func.count()).where(
                LoginAttempt.email == staff.email, LoginAttempt.succeeded.is_(False)
            )
        )
    assert failures == 5
    # once the window has passed, the right password works again
    async with sessionmaker.begin() as session:
        await session.execute(update(LoginAttempt).values(at=utcnow() - timedelta(minutes=16)))
    assert (await b.login(staff.email)).status == 303


async def test_a_success_resets_the_count_for_the_email(
    browser: NewBrowser, make_staff: MakeStaff
) -> None:
    staff = await make_staff(StaffRole.editor)
    b = browser()
    for _ in range(4):
        await b.login(staff.email, "wrong password")
    assert (await b.login(staff.email)).status == 303
    other = browser()
    for _ in range(4):
        assert (await other.login(staff.email, "wrong password")).status == 401
    assert (await other.login(staff.email)).status == 303


class TestPerAddressLimit:
    @pytest.fixture
    def admin_settings(self, settings: Settings) -> Settings:
        admin = settings.admin.model_copy(update={"login_failures_per_ip": 3})
        return settings.model_copy(update={"admin": admin})

    async def test_failures_from_one_address_lock_it_for_every_email(
        self, browser: NewBrowser, make_staff: MakeStaff
    ) -> None:
        staff = await make_staff(StaffRole.editor)
        b = browser()
        for n in range(3):
            assert (await b.login(f"guess{n}@shut.example.vn", "wrong password")).status == 401
        assert (await b.login(staff.email)).status == 429


async def test_language_switch_sets_a_cookie_and_translates_the_page(
    viewer: AdminBrowser,
) -> None:
    assert "Đăng xuất" in await viewer.page("/admin/try")  # Vietnamese by default
    response = await viewer.get("/admin/lang/en?next=/admin/try")
    assert response.status == 303
    assert response.headers["Location"] == "/admin/try"
    page = await viewer.page("/admin/try")
    assert "Log out" in page
    assert '<html lang="en">' in page
    assert (await viewer.get("/admin/lang/fr")).status == 404


async def _login_with_headers(
    b: AdminBrowser, email: str, password: str, headers: dict[str, str]
) -> ClientResponse:
    form = await b.page("/admin/login")
    token = form.split('name="csrf_token" value="')[1].split('"')[0]
    return await b.post(
        "/admin/login", {"email": email, "password": password}, csrf=token, headers=headers
    )


class TestSecureCookieSetting:
    @pytest.fixture
    def admin_settings(self, settings: Settings) -> Settings:
        admin = settings.admin.model_copy(update={"cookie_secure": True})
        return settings.model_copy(update={"admin": admin})

    async def test_cookies_are_marked_secure(self, browser: NewBrowser) -> None:
        # (over plain HTTP the client then keeps them to itself: set it only behind HTTPS)
        b = browser()
        response = await b.get("/admin/login")
        assert response.cookies["tuvan_admin_login"]["secure"]
        assert response.cookies["tuvan_admin_login"]["httponly"]


class TestBehindAProxy:
    @pytest.fixture
    def admin_settings(self, settings: Settings) -> Settings:
        admin = settings.admin.model_copy(update={"trust_proxy": True, "login_failures_per_ip": 2})
        return settings.model_copy(update={"admin": admin})

    async def test_forwarded_address_and_scheme_are_used(
        self, browser: NewBrowser, make_staff: MakeStaff
    ) -> None:
        staff = await make_staff(StaffRole.viewer)
        b = browser()
        guesser = {"X-Forwarded-For": "198.51.100.7, 203.0.113.9"}  # the proxy appended the last
        for n in range(2):
            await _login_with_headers(b, f"g{n}@shut.example.vn", "wrong password", guesser)
        locked = await _login_with_headers(b, staff.email, staff.password, guesser)
        assert locked.status == 429
        colleague = {"X-Forwarded-For": "203.0.113.10", "X-Forwarded-Proto": "https"}
        response = await _login_with_headers(b, staff.email, staff.password, colleague)
        assert response.status == 303
        assert response.cookies["tuvan_admin"]["secure"]


async def test_a_login_prunes_attempts_older_than_a_day(
    browser: NewBrowser, make_staff: MakeStaff, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    staff = await make_staff(StaffRole.viewer)
    async with sessionmaker.begin() as session:
        for days in (0, 2):
            session.add(
                LoginAttempt(
                    email="old@shut.example.vn",
                    ip="192.0.2.1",
                    succeeded=False,
                    at=utcnow() - timedelta(days=days, minutes=1),
                )
            )
    assert (await browser().login(staff.email)).status == 303
    async with sessionmaker() as session:
        left = (
            await session.scalars(
                select(LoginAttempt.at).where(LoginAttempt.email == "old@shut.example.vn")
            )
        ).all()
    assert len(left) == 1
    assert utcnow() - left[0] < timedelta(days=1)
