"""The small university site served on loopback, for the crawler and command tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.retrieval.crawl._support import Site, site_pages


# test_fetch.py has a `site` of its own (another server): a module's fixture wins over this one.
@pytest.fixture
async def site() -> AsyncIterator[Site]:
    pages: dict[str, str] = {}
    recorded = Site("")

    async def handle(request: web.Request) -> web.StreamResponse:
        recorded.requests.append((request.host, request.path))
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nDisallow: /private/\n")
        if request.path == "/anh/so-do.png":
            return web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")
        if request.path.endswith(".pdf"):
            return web.Response(body=b"%PDF-1.4\n%%EOF\n", content_type="application/pdf")
        if request.path == "/cham":
            await asyncio.sleep(2)
        if request.path in pages or request.path == "/cham":
            return web.Response(text=pages.get(request.path, ""), content_type="text/html")
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    recorded.base = f"http://127.0.0.1:{server.port}"
    # "localhost" is another host of the same server: an external site the crawler must not visit.
    pages.update(site_pages(f"http://localhost:{server.port}"))
    try:
        yield recorded
    finally:
        await server.close()
