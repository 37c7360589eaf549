"""A browser for the admin tests: its own cookie jar, real HTTP on 127.0.0.1, the CSRF token
of its login sent with every POST. Imported by tests/admin/conftest.py and the tests."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import ClientResponse
from aiohttp.test_utils import TestServer

from bot.models import StaffRole

PASSWORD = "correct horse battery staple"
_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')
_LOGIN_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')

FormBody = Mapping[str, str] | Sequence[tuple[str, str]] | aiohttp.FormData


@dataclass(frozen=True)
class Staff:
    id: int
    email: str
    role: StaffRole
    password: str = PASSWORD


class AdminBrowser:
    """One person's browser on the admin (no redirects followed unless asked)."""

    def __init__(self, server: TestServer) -> None:
        self.server = server
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))

    async def close(self) -> None:
        await self.http.close()

    async def get(self, path: str, **kwargs: Any) -> ClientResponse:
        kwargs.setdefault("allow_redirects", False)
        async with self.http.get(self.url(path), **kwargs) as response:
            await response.read()
            return response

    async def page(self, path: str) -> str:
        """The HTML of a page that must be there (200)."""
        response = await self.get(path)
        text = await response.text()
        assert response.status == 200, f"GET {path}: {response.status}\n{text[:2000]}"
        return text

    async def post(
        self,
        path: str,
        data: FormBody | None = None,
        *,
        csrf: str | None = None,
        headers: Mapping[str, str] | None = None,
        follow: bool = False,
    ) -> ClientResponse:
        """POST a form with this browser's CSRF token (``csrf=""`` sends none)."""
        token = self.csrf if csrf is None else csrf
        body: Any
        if isinstance(data, aiohttp.FormData):
            body = data
            if token:
                headers = {**(headers or {}), "X-CSRF-Token": token}
        else:
            pairs = list(data.items()) if isinstance(data, Mapping) else list(data or [])
            if token:
                pairs.append(("csrf_token", token))
            body = pairs
        async with self.http.post(
            self.url(path), data=body, headers=headers, allow_redirects=follow
        ) as response:
            await response.read()
            return response

    async def login(self, email: str, password: str = PASSWORD) -> ClientResponse:
        """Fill in the login form as a person would; on success, keep the session's CSRF token."""
        form = await self.page("/admin/login")
        found = _LOGIN_TOKEN.search(form)
        assert found, "the login form carries a CSRF token"
        response = await self.post(
            "/admin/login", {"email": email, "password": password}, csrf=found.group(1)
        )
        if response.status == 303:
            self.csrf = csrf_of(await self.page("/admin/try"))
        return response


def csrf_of(page: str) -> str:
    found = _CSRF_META.search(page)
    assert found, "a page names its CSRF token"
    assert found.group(1), "a signed-in page has a CSRF token"
    return found.group(1)
