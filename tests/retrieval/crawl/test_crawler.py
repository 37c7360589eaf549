"""The crawler against a small Vietnamese university site served on loopback."""

from __future__ import annotations

import asyncio
import gc
import itertools
from types import SimpleNamespace

import aiohttp

from retrieval.crawl.crawler import crawl
from retrieval.crawl.fetch import Fetcher
from retrieval.loading.document import LoadedDocument
from tests.retrieval.crawl._support import Site, by_source, run_crawl


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
    # The crawler spaces its turns; a request starts a little after its turn (its address is
    # checked first), by 2-3 ms more for one than the next on a loaded machine. Unspaced, the
    # gaps would be under a millisecond.
    assert min(gaps) >= 0.05 - 0.005
    assert sum(gaps) / len(gaps) >= 0.05 - 0.001


async def test_on_page_is_awaited_with_each_page_in_crawl_order(site: Site) -> None:
    seen: list[str] = []

    async def on_page(doc: LoadedDocument) -> None:
        seen.append(doc.source)

    result = await run_crawl(site, on_page=on_page)

    assert seen == [doc.source for doc in result.pages]
    assert seen[0] == site.url("/")
