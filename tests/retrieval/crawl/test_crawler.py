"""The crawler against a small Vietnamese university site served on loopback."""

from __future__ import annotations

import asyncio
import gc
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from click.testing import CliRunner
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.cli.commands.crawl import crawl_command
from bot.cli.commands.ingest import ingest_command as ingest
from bot.core.settings import IngestSettings, Settings
from bot.db.models import Document
from retrieval.crawl.crawler import CrawlResult, crawl
from retrieval.crawl.fetch import Fetcher, FetchPolicy
from retrieval.crawl.urls import normalise_url, registered_domain
from retrieval.loading.document import LoadedDocument

CHROME_TOP = """
<header class="site-header"><a href="/">Trường Đại học Mẫu</a> Hotline tuyển sinh 1900 1234</header>
<nav><ul><li><a href="/">Trang chủ</a></li><li><a href="/gioi-thieu">Giới thiệu</a></li>
<li><a href="/tuyen-sinh">Tuyển sinh</a></li></ul></nav>
"""
CHROME_BOTTOM = """
<aside>Tin nổi bật: lễ khai giảng</aside>
<footer>Bản quyền © 2025 Trường Đại học Mẫu. Địa chỉ: 1 Đường Mẫu, Hà Nội.</footer>
<script>window.dataLayer = [];</script>
"""
HOC_PHI = """<h1>Học phí năm học 2025–2026</h1>
<p>Học phí chương trình chuẩn là 15 triệu đồng mỗi học kỳ.</p>
<p>Sinh viên được <a href="/tuyen-sinh#hoc-bong">xét học bổng</a> theo kết quả học tập.</p>"""


def page(title: str, main: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        f"{CHROME_TOP}<main>{main}</main>{CHROME_BOTTOM}</body></html>"
    )


def site_pages(external: str) -> dict[str, str]:
    return {
        "/": page(
            "Trang chủ - Trường Đại học Mẫu",
            """<h1>Chào mừng thí sinh</h1>
            <p>Trường Đại học Mẫu tuyển sinh đại học chính quy năm 2025.</p>
            <ul>
              <li><a href="/tuyen-sinh#phuong-thuc">Phương thức tuyển sinh</a></li>
              <li><a href="/tuyen-sinh?utm_source=facebook&amp;utm_medium=post">Tuyển sinh</a></li>
              <li><a href="/hoc-phi">Học phí</a></li>
              <li><a href="/ban-sao/hoc-phi">Học phí (bản cũ)</a></li>
              <li><a href="/private/noi-bo">Tài liệu nội bộ</a></li>
              <li><a href="/khong-ton-tai">Trang đã xoá</a></li>
              <li><a href="/files/de-an-tuyen-sinh.pdf">Đề án tuyển sinh (PDF)</a></li>
              <li><a href="/anh/so-do.png">Sơ đồ khuôn viên</a></li>
              <li><a href="/chuoi/1">Hướng dẫn nhập học</a></li>
              <li><a href="{external}/gioi-thieu">Trang đối tác</a></li>
            </ul>""".replace("{external}", external),
        ),
        "/gioi-thieu": page(
            "Giới thiệu",
            "<h1>Giới thiệu</h1><p>Trường được thành lập năm 1960, đào tạo 40 ngành.</p>",
        ),
        "/tuyen-sinh": page(
            "Tuyển sinh 2025",
            """<h1>Tuyển sinh 2025</h1><p>Chỉ tiêu năm 2025 là 3.000 sinh viên.</p>
            <h2 id="phuong-thuc">Phương thức</h2>
            <ul><li>Xét tuyển thẳng</li><li>Xét điểm thi tốt nghiệp THPT</li></ul>
            <h2 id="hoc-bong">Học bổng</h2>
            <p>Thủ khoa được miễn học phí năm nhất. Xem <a href="/hoc-phi">học phí</a>.</p>""",
        ),
        "/hoc-phi": page("Học phí", HOC_PHI),
        # The same article under an old path, in a different page frame.
        "/ban-sao/hoc-phi": page("Học phí (lưu trữ)", HOC_PHI),
        "/private/noi-bo": page("Nội bộ", "<p>Tài liệu nội bộ, không công khai.</p>"),
        "/chuoi/1": page(
            "Nhập học bước 1", '<p>Bước 1: nộp hồ sơ. <a href="/chuoi/2">Bước 2</a></p>'
        ),
        "/chuoi/2": page(
            "Nhập học bước 2", '<p>Bước 2: đóng học phí. <a href="/chuoi/3">Bước 3</a></p>'
        ),
        "/chuoi/3": page("Nhập học bước 3", "<p>Bước 3: nhận thẻ sinh viên.</p>"),
    }


@dataclass
class Site:
    base: str  # http://127.0.0.1:port
    requests: list[tuple[str, str]] = field(default_factory=list)  # (Host header, path)

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        return [path for _, path in self.requests]

    @property
    def policy(self) -> FetchPolicy:
        """The site is on loopback: allowed by its host and port, as an operator would."""
        return FetchPolicy(allow_private_hosts=(self.base.removeprefix("http://"),))

    def settings(self, database_url: str, data_dir: Path) -> Settings:
        ingest = IngestSettings(allow_private_hosts=[self.base.removeprefix("http://")])
        return Settings(_env_file=None, database_url=database_url, data_dir=data_dir, ingest=ingest)


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


async def run_crawl(site: Site, **options: object) -> CrawlResult:
    options = {"max_depth": 2, "delay_s": 0.005, "concurrency": 2, **options}
    async with Fetcher(site.policy) as fetcher:
        return await crawl([site.url("/")], fetcher=fetcher, **options)  # type: ignore[arg-type]


def by_source(result: CrawlResult, site: Site) -> dict[str, LoadedDocument]:
    return {doc.source.removeprefix(site.base): doc for doc in result.pages}


async def test_pages_within_the_depth_limit_are_crawled_once_each(site: Site) -> None:
    result = await run_crawl(site)

    assert sorted(by_source(result, site)) == [
        "/", "/chuoi/1", "/chuoi/2", "/gioi-thieu", "/hoc-phi", "/tuyen-sinh",
    ]  # fmt: skip
    assert [doc.meta["depth"] for doc in result.pages if doc.source.endswith("/chuoi/2")] == [2]
    # Depth 3 is beyond the limit: never requested.
    assert "/chuoi/3" not in site.paths()
    # Fragment and tracking parameters do not make another page: one request, one page.
    assert site.paths().count("/tuyen-sinh") == 1
    assert site.paths().count("/robots.txt") == 1


async def test_depth_zero_crawls_only_the_start_pages(site: Site) -> None:
    result = await run_crawl(site, max_depth=0)

    assert [doc.source for doc in result.pages] == [site.url("/")]
    assert result.files == []


async def test_robots_txt_disallowed_pages_are_skipped_without_a_request(site: Site) -> None:
    result = await run_crawl(site)

    assert (site.url("/private/noi-bo"), "disallowed by robots.txt") in result.skipped
    assert not any(path.startswith("/private/") for path in site.paths())


async def test_the_same_main_text_at_two_paths_is_one_page(site: Site) -> None:
    result = await run_crawl(site)

    assert result.duplicates == [(site.url("/ban-sao/hoc-phi"), site.url("/hoc-phi"))]
    assert site.url("/ban-sao/hoc-phi") not in [doc.source for doc in result.pages]


async def test_page_chrome_is_dropped_and_main_text_kept_as_markdown_with_links(
    site: Site,
) -> None:
    result = await run_crawl(site)
    home = by_source(result, site)["/"]
    text = "\n".join(section.text for section in home.sections)

    assert "tuyển sinh đại học chính quy năm 2025" in text
    assert f"[Học phí]({site.url('/hoc-phi')})" in text
    assert f"[Phương thức tuyển sinh]({site.url('/tuyen-sinh#phuong-thuc')})" in text
    for chrome in ("Hotline", "Bản quyền", "Tin nổi bật", "dataLayer", "Trang chủ"):
        assert chrome not in text


async def test_pages_carry_title_url_language_and_sections(site: Site) -> None:
    result = await run_crawl(site)
    pages = by_source(result, site)
    admissions = pages["/tuyen-sinh"]

    assert admissions.title == "Tuyển sinh 2025"
    assert admissions.url == admissions.source == site.url("/tuyen-sinh")
    assert admissions.language == "vi"
    headings = [s.heading_path for s in admissions.sections]
    assert headings == [(), ("Phương thức",), ("Học bổng",)]
    assert len({doc.content_hash for doc in result.pages}) == len(result.pages)


async def test_links_between_pages_are_stored_normalised_and_same_site_only(site: Site) -> None:
    result = await run_crawl(site)
    pages = by_source(result, site)

    assert pages["/"].meta["links"] == [
        site.url(path)
        for path in (
            "/tuyen-sinh", "/hoc-phi", "/ban-sao/hoc-phi", "/private/noi-bo", "/khong-ton-tai",
            "/files/de-an-tuyen-sinh.pdf", "/anh/so-do.png", "/chuoi/1",
        )
    ]  # fmt: skip
    assert pages["/tuyen-sinh"].meta["links"] == [site.url("/hoc-phi")]
    assert "crawled_at" in pages["/"].meta


async def test_failures_are_recorded_not_raised_and_pdfs_listed(site: Site) -> None:
    result = await run_crawl(site)

    skipped = dict(result.skipped)
    assert skipped[site.url("/khong-ton-tai")] == "HTTP 404"
    assert skipped[site.url("/anh/so-do.png")] == "not HTML (image/png)"
    assert result.files == [site.url("/files/de-an-tuyen-sinh.pdf")]
    assert "/files/de-an-tuyen-sinh.pdf" not in site.paths()
    # The external site (another host) is neither requested nor recorded as a failure.
    assert all(host.startswith("127.0.0.1") for host, _ in site.requests)
    assert not any("localhost" in url for url, _ in result.skipped)


async def test_a_timeout_is_recorded_not_raised(site: Site) -> None:
    async with Fetcher(site.policy, timeout=aiohttp.ClientTimeout(total=0.2)) as fetcher:
        result = await crawl([site.url("/cham")], fetcher=fetcher, delay_s=0)

    assert result.pages == []
    assert result.skipped == [(site.url("/cham"), "timed out")]


async def test_max_pages_stops_the_crawl(site: Site) -> None:
    result = await run_crawl(site, max_pages=3)

    assert len(result.pages) == 3
    assert "/chuoi/2" not in site.paths()


async def test_requests_to_one_host_are_spaced_by_the_delay(site: Site) -> None:
    started: list[float] = []

    async def on_request_start(
        session: aiohttp.ClientSession, context: SimpleNamespace, params: object
    ) -> None:
        started.append(asyncio.get_running_loop().time())

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_request_start)
    # A garbage collection between a request's turn and its start (10+ ms seen on a busy
    # machine) would shorten the gap measured here, not the spacing the crawler keeps.
    gc.disable()
    try:
        async with Fetcher(site.policy, trace_configs=[trace]) as fetcher:
            await crawl([site.url("/")], fetcher=fetcher, max_depth=1, delay_s=0.05, concurrency=4)
    finally:
        gc.enable()

    assert len(started) >= 8
    gaps = [later - earlier for earlier, later in itertools.pairwise(started)]
    assert min(gaps) >= 0.05 - 0.002


async def test_on_page_is_awaited_with_each_page_in_crawl_order(site: Site) -> None:
    seen: list[str] = []

    async def on_page(doc: LoadedDocument) -> None:
        seen.append(doc.source)

    result = await run_crawl(site, on_page=on_page)

    assert seen == [doc.source for doc in result.pages]
    assert seen[0] == site.url("/")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Truong.EDU.vn:80/tuyen-sinh/#muc-2", "http://truong.edu.vn/tuyen-sinh"),
        ("https://truong.edu.vn:443", "https://truong.edu.vn/"),
        ("https://truong.edu.vn:8443/a", "https://truong.edu.vn:8443/a"),
        ("https://truong.edu.vn/a?b=2&utm_source=zalo&a=1&fbclid=x", "https://truong.edu.vn/a?a=1&b=2"),
        ("mailto:tuyensinh@truong.edu.vn", None),
        ("javascript:void(0)", None),
    ],
)  # fmt: skip
def test_urls_are_normalised(raw: str, expected: str | None) -> None:
    assert normalise_url(raw) == expected


def test_relative_links_resolve_against_the_page() -> None:
    assert normalise_url("../hoc-phi", "https://a.edu.vn/tuyen-sinh/2025/") == (
        "https://a.edu.vn/tuyen-sinh/hoc-phi"
    )


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("tuyensinh.hust.edu.vn", "hust.edu.vn"),
        ("www.ptit.edu.vn", "ptit.edu.vn"),
        ("news.example.com", "example.com"),
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_registered_domain(host: str, domain: str) -> None:
    assert registered_domain(host) == domain


# -- the command --------------------------------------------------------------------------------


async def test_crawl_command_indexes_each_page_under_its_url(
    site: Site, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    settings = site.settings(database_url, tmp_path)
    args = [site.url("/"), "--depth", "1", "--delay", "0", "--no-files"]

    # The command runs its own event loop: give it a thread, as a shell would a process.
    outcome = await asyncio.to_thread(
        CliRunner().invoke, crawl_command, args, obj=settings, catch_exceptions=False
    )
    sources = [site.url(p) for p in ("/", "/gioi-thieu", "/tuyen-sinh", "/hoc-phi", "/chuoi/1")]
    try:
        assert outcome.exit_code == 0, outcome.output
        assert "crawled 5 pages, 1 duplicates" in outcome.output
        async with engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(Document.source, Document.title, Document.url).where(
                        Document.source.startswith(site.base)
                    )
                )
            ).all()
        assert sorted(source for source, _, _ in rows) == sorted(sources)
        assert all(url == source for source, _, url in rows)
    finally:
        async with engine.begin() as conn:
            await conn.execute(delete(Document).where(Document.source.startswith(site.base)))


async def test_ingest_takes_urls_beside_files_and_reads_one_page_each(
    site: Site, engine: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    settings = site.settings(database_url, tmp_path)
    note = tmp_path / "ghi-chu.md"
    note.write_text("# Ghi chú\n\nHạn nộp hồ sơ là ngày 30/6.\n", encoding="utf-8")
    args = [site.url("/tuyen-sinh"), str(note)]
    outcome = await asyncio.to_thread(
        CliRunner().invoke, ingest, args, obj=settings, catch_exceptions=False
    )
    try:
        assert outcome.exit_code == 0, outcome.output
        assert "indexed 1 documents" in outcome.output
        assert "crawled 1 pages" in outcome.output
        async with engine.connect() as conn:
            sources = set(
                (
                    await conn.execute(
                        select(Document.source).where(
                            Document.source.in_([site.url("/tuyen-sinh"), str(note)])
                            | Document.source.startswith(site.base)
                        )
                    )
                ).scalars()
            )
        assert sources == {site.url("/tuyen-sinh"), str(note)}  # depth 0: no linked page
    finally:
        async with engine.begin() as conn:
            await conn.execute(
                delete(Document).where(
                    Document.source.startswith(site.base) | (Document.source == str(note))
                )
            )


async def test_ingest_names_a_missing_file(database_url: str, tmp_path: Path) -> None:
    settings = Settings(_env_file=None, database_url=database_url, data_dir=tmp_path)
    outcome = await asyncio.to_thread(
        CliRunner().invoke, ingest, [str(tmp_path / "nope.pdf")], obj=settings
    )
    assert outcome.exit_code == 2
    assert "no such file or folder" in outcome.output
    assert "nope.pdf" in outcome.output
