"""The fetch rules against two servers on loopback: the site being crawled (allowed by host and
port, as an operator would allow an intranet site) and an "internal" service on another port of
the same host, which must never get a request."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from click.testing import CliRunner
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.cli.commands.crawl import crawl_command
from bot.cli.commands.ingest import ingest_command
from bot.core.settings import IngestSettings, Settings
from bot.db.models import Chunk, Document
from retrieval.crawl.crawler import crawl
from retrieval.crawl.fetch import Fetcher, FetchPolicy, FetchRefused, FetchTooLarge
from retrieval.crawl.urls import SiteScope

LAST = "Đoạn cuối: hạn chót nhận hồ sơ xét tuyển là ngày 31 tháng 7."
SECRET = "Database password: hunter2-internal"


def big_page(size: int, *, bulk_in_text: bool) -> bytes:
    """An HTML page of at least ``size`` bytes whose last paragraph is ``LAST``: its bulk as
    paragraphs of the main text, or as an inline script (as a theme's data blob is)."""
    paragraph = "<p>Thí sinh nộp hồ sơ trực tuyến trên cổng tuyển sinh của trường.</p>\n"
    count = size // len(paragraph.encode()) + 1
    bulk = paragraph * count if bulk_in_text else ""
    script = "" if bulk_in_text else f"<script>var d = '{'x' * size}';</script>"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Lịch tuyển sinh</title>"
        f"{script}</head><body><main><h1>Lịch tuyển sinh</h1>{bulk}<p>{LAST}</p></main>"
        "</body></html>"
    ).encode()


@dataclass
class Target:
    port: int = 0
    requests: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def allowed(self) -> str:
        return f"127.0.0.1:{self.port}"


async def serve(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> TestServer:
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handler)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


@pytest.fixture
async def internal() -> AsyncIterator[Target]:
    target = Target()

    async def handle(request: web.Request) -> web.Response:
        target.requests.append(request.path)
        kind = "application/pdf" if request.path.endswith(".pdf") else "text/html"
        return web.Response(text=f"<p>{SECRET}</p>", content_type=kind)

    server = await serve(handle)
    target.port = server.port or 0
    yield target
    await server.close()


@pytest.fixture
async def site(internal: Target) -> AsyncIterator[Target]:
    target = Target()
    redirects = {
        "/chuyen-huong": f"{internal.base}/secret.pdf",
        "/files/de-an.pdf": f"{internal.base}/secret.pdf",
        "/chuoi/1": "/chuoi/2",
        "/chuoi/2": f"{internal.base}/secret",
        "/den-metadata": "http://169.254.169.254/latest/meta-data/",
        "/den-localhost": f"http://localhost:{internal.port}/secret",
        "/den-tep": "file:///etc/passwd",
        "/vong": "/vong",
    }
    home = f"""<!doctype html><html><head><meta charset="utf-8"><title>Trang chủ</title></head>
    <body><main><h1>Tuyển sinh 2025</h1><p>Trường tuyển 3.000 sinh viên.</p><ul>
    <li><a href="/chuyen-huong">Quy chế</a></li><li><a href="/files/de-an.pdf">Đề án</a></li>
    <li><a href="{internal.base}/noi-bo">Cùng máy, cổng khác</a></li>
    <li><a href="/trang-lon">Lịch tuyển sinh</a></li></ul></main></body></html>"""

    async def handle(request: web.Request) -> web.StreamResponse:
        target.requests.append(request.path)
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        if request.path in redirects:
            raise web.HTTPFound(redirects[request.path])
        if request.path == "/":
            return web.Response(text=home, content_type="text/html")
        if request.path == "/trang-lon":
            return await stream(request, big_page(2_000_000, bulk_in_text=False))
        if request.path == "/trang-lon-chu":
            return await stream(request, big_page(2_000_000, bulk_in_text=True))
        if request.path == "/khai-bao":  # a Content-Length the client can judge before reading
            return web.Response(body=big_page(400_000, bulk_in_text=True), content_type="text/html")
        raise web.HTTPNotFound()

    server = await serve(handle)
    target.port = server.port or 0
    yield target
    await server.close()


async def stream(request: web.Request, body: bytes) -> web.StreamResponse:
    """Sent in pieces, chunked, as a slow site would: a reader that takes what is buffered gets
    only part of it."""
    response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
    await response.prepare(request)
    for start in range(0, len(body), 256 * 1024):
        await response.write(body[start : start + 256 * 1024])
        await asyncio.sleep(0)
    await response.write_eof()
    return response


def policy(
    site: Target, *, max_page_bytes: int = 5_000_000, max_file_bytes: int = 0
) -> FetchPolicy:
    return FetchPolicy(
        allow_private_hosts=(site.allowed,),
        max_page_bytes=max_page_bytes,
        max_file_bytes=max_file_bytes or 50_000_000,
    )


# -- the fetcher --------------------------------------------------------------------------------


async def test_a_redirect_chain_to_a_private_address_is_refused_at_the_hop(
    site: Target, internal: Target
) -> None:
    async with Fetcher(policy(site)) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get(f"{site.base}/chuoi/1")

    assert refused.value.url == f"{internal.base}/secret"
    assert "refused: 127.0.0.1 is loopback, not a public address" in refused.value.reason
    assert site.requests == ["/chuoi/1", "/chuoi/2"]
    assert internal.requests == []


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/den-metadata", "refused: 169.254.169.254 is link-local, not a public address"),
        ("/den-localhost", "refused: localhost resolves to 127.0.0.1, loopback"),
        ("/den-tep", "refused: file scheme, only http and https"),
        ("/vong", "more than 5 redirects"),
    ],
)
async def test_redirects_to_metadata_a_loopback_name_or_a_file_are_refused(
    site: Target, internal: Target, path: str, reason: str
) -> None:
    async with Fetcher(policy(site)) as fetcher:
        with pytest.raises(FetchRefused) as refused:
            await fetcher.get(site.base + path)

    assert reason in refused.value.reason
    assert internal.requests == []


async def test_an_address_literal_in_ipv6_form_is_refused_before_any_request(
    internal: Target,
) -> None:
    async with Fetcher(FetchPolicy()) as fetcher:
        with pytest.raises(FetchRefused, match=r"IPv4 127\.0\.0\.1 inside IPv6"):
            await fetcher.get(f"http://[::ffff:127.0.0.1]:{internal.port}/secret")
        with pytest.raises(FetchRefused, match="loopback"):
            await fetcher.get_file(f"{internal.base}/secret.pdf")
    assert internal.requests == []


async def test_a_redirect_off_the_site_is_not_followed_when_the_caller_keeps_to_it(
    site: Target, internal: Target
) -> None:
    scope = SiteScope([site.base + "/"])
    # Allowed by address, but another site: the caller's scope stops it before any request.
    allow_both = FetchPolicy(allow_private_hosts=(site.allowed, internal.allowed))
    async with Fetcher(allow_both) as fetcher:
        with pytest.raises(FetchRefused, match="redirected off-site to"):
            await fetcher.get(f"{site.base}/chuyen-huong", stay=scope.__contains__)
    assert internal.requests == []


async def test_a_2mb_body_sent_in_pieces_is_read_whole(site: Target) -> None:
    expected = big_page(2_000_000, bulk_in_text=True)
    async with Fetcher(policy(site)) as fetcher:
        fetched = await fetcher.get(f"{site.base}/trang-lon-chu")

    assert len(fetched.body) == len(expected) > 2_000_000
    assert fetched.body == expected


async def test_a_body_over_the_cap_is_refused_whole(site: Target) -> None:
    async with Fetcher(policy(site, max_page_bytes=300_000, max_file_bytes=300_000)) as fetcher:
        with pytest.raises(FetchTooLarge, match=r"larger than the cap of 300,000 bytes$"):
            await fetcher.get(f"{site.base}/trang-lon-chu")  # chunked: found while reading
        with pytest.raises(FetchTooLarge, match=r"declared\)$"):
            await fetcher.get(f"{site.base}/khai-bao")  # Content-Length: refused unread
        with pytest.raises(FetchTooLarge):
            await fetcher.get_file(f"{site.base}/trang-lon-chu")


# -- the crawl ----------------------------------------------------------------------------------


async def test_a_crawled_pages_redirect_to_the_internal_target_is_not_fetched(
    site: Target, internal: Target
) -> None:
    async with Fetcher(policy(site)) as fetcher:
        result = await crawl([site.base + "/"], fetcher=fetcher, max_depth=1, delay_s=0)

    skipped = dict(result.skipped)
    assert skipped[f"{site.base}/chuyen-huong"] == (
        f"redirected off-site to {internal.base}/secret.pdf"
    )
    assert internal.requests == []
    assert not any(SECRET in s.text for doc in result.pages for s in doc.sections)
    # The document link is on-site: listed for download (which the hop check refuses, below).
    assert result.files == [f"{site.base}/files/de-an.pdf"]


async def test_the_same_host_on_another_port_is_off_site(site: Target, internal: Target) -> None:
    scope = SiteScope([site.base + "/"])
    assert f"{site.base}/tuyen-sinh" in scope
    assert f"{internal.base}/noi-bo" not in scope
    assert f"https://127.0.0.1:{site.port}/" not in scope  # another scheme on that port
    # Default ports go together: a site moves between http and https.
    assert "https://tuyensinh.truong.edu.vn/a" in SiteScope(["http://truong.edu.vn/"])
    assert "http://truong.edu.vn:8080/a" not in SiteScope(["http://truong.edu.vn/"])

    async with Fetcher(policy(site)) as fetcher:
        result = await crawl([site.base + "/"], fetcher=fetcher, max_depth=1, delay_s=0)

    home = next(doc for doc in result.pages if doc.source == site.base + "/")
    assert f"{internal.base}/noi-bo" not in home.meta["links"]
    assert internal.requests == []


async def test_a_page_over_the_cap_is_skipped_with_a_log_line(
    site: Target, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="retrieval.crawl.crawler")
    async with Fetcher(policy(site, max_page_bytes=300_000)) as fetcher:
        result = await crawl([f"{site.base}/trang-lon-chu"], fetcher=fetcher, delay_s=0)

    assert result.pages == []
    assert result.skipped == [
        (f"{site.base}/trang-lon-chu", "larger than the cap of 300,000 bytes")
    ]
    assert f"crawl: skipped {site.base}/trang-lon-chu: larger than the cap" in caplog.text


# -- the commands -------------------------------------------------------------------------------


def settings_for(database_url: str, data_dir: Path, *allowed: str) -> Settings:
    ingest = IngestSettings(allow_private_hosts=list(allowed))
    return Settings(_env_file=None, database_url=database_url, data_dir=data_dir, ingest=ingest)


async def test_crawl_command_indexes_a_2mb_page_whole_and_nothing_internal(
    site: Target, internal: Target, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    settings = settings_for(database_url, tmp_path, site.allowed)
    args = [site.base + "/", "--depth", "1", "--delay", "0"]
    outcome = await asyncio.to_thread(
        CliRunner().invoke, crawl_command, args, obj=settings, catch_exceptions=False
    )
    try:
        assert outcome.exit_code == 0, outcome.output
        assert internal.requests == []
        # The linked PDF redirects to the internal target: refused at that hop.
        assert f"skipped {site.base}/files/de-an.pdf: " in outcome.output
        assert "127.0.0.1 is loopback" in outcome.output
        async with engine.connect() as conn:
            sources = set(
                (
                    await conn.execute(
                        select(Document.source).where(Document.source.like("http://127.0.0.1:%"))
                    )
                ).scalars()
            )
            big = (
                await conn.execute(
                    select(Chunk.text)
                    .join(Document, Chunk.document_id == Document.id)
                    .where(Document.source == f"{site.base}/trang-lon")
                    .order_by(Chunk.ordinal)
                )
            ).scalars()
            text = "\n".join(big)
        assert sources == {site.base + "/", f"{site.base}/trang-lon"}
        assert LAST in text
    finally:
        async with engine.begin() as conn:
            await conn.execute(delete(Document).where(Document.source.startswith(site.base)))


async def test_ingest_of_a_private_address_is_refused_unless_allowed(
    site: Target, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    url = site.base + "/"
    refused = await asyncio.to_thread(
        CliRunner().invoke, ingest_command, [url], obj=settings_for(database_url, tmp_path)
    )
    assert refused.exit_code == 1
    assert f"skipped {url}: refused: 127.0.0.1 is loopback, not a public address" in (
        refused.output
    )
    assert "TUVAN_INGEST__ALLOW_PRIVATE_HOSTS" in refused.output
    assert site.requests == []

    allowed = await asyncio.to_thread(
        CliRunner().invoke,
        ingest_command,
        [url],
        obj=settings_for(database_url, tmp_path, site.allowed),
    )
    try:
        assert allowed.exit_code == 0, allowed.output
        assert "indexed 1 documents" in allowed.output
    finally:
        async with engine.begin() as conn:
            await conn.execute(delete(Document).where(Document.source.startswith(site.base)))
