"""Crawling a web site into `LoadedDocument`s: one per page, main content as Markdown with links.

Breadth first from the start URLs, depth by depth, on the start URLs' site (`SiteScope`: their
registered domains or an allow-list, on their scheme and port); every request through a `Fetcher`
(public addresses only, redirects vetted hop by hop and kept on the site, bodies capped);
robots.txt honoured; at most `concurrency` requests at once and `delay_s` between two requests to
the same host. URLs are normalised before they are compared, and a page whose main text is the
same as an earlier page's is recorded as a duplicate of it. On-site PDF and DOCX links are
collected for the caller to ingest with the file loaders. A failed or refused fetch is logged and
recorded, never raised. No database: the caller indexes the pages (`on_page` lets it do so while
the crawl goes on).
"""

from __future__ import annotations

import asyncio
import logging
import urllib.robotparser
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from retrieval.crawl.fetch import HTML_TYPES, Fetched, Fetcher, FetchError
from retrieval.crawl.pages import extract_page, markdown_hash, page_document
from retrieval.crawl.urls import DOCUMENT_TYPES, SiteScope, is_document_link, normalise_url
from retrieval.loading.document import LoadedDocument

log = logging.getLogger(__name__)

OnPage = Callable[[LoadedDocument], Awaitable[None]]


@dataclass
class CrawlResult:
    """What a crawl found: pages, and the URLs it skipped, kept once or left to the file loaders."""

    pages: list[LoadedDocument] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (url, url of the kept page)
    files: list[str] = field(default_factory=list)  # PDF and DOCX URLs, for the file loaders


class _Politeness:
    """At most `concurrency` requests in flight, and request starts to one host `delay_s` apart
    (or the robots.txt Crawl-delay, when longer)."""

    def __init__(self, concurrency: int, delay_s: float) -> None:
        self.slots = asyncio.Semaphore(max(1, concurrency))
        self.delay_s = delay_s
        self.host_delay: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._last: dict[str, float] = {}

    async def wait_turn(self, host: str) -> None:
        loop = asyncio.get_running_loop()
        async with self._locks.setdefault(host, asyncio.Lock()):
            delay = max(self.delay_s, self.host_delay.get(host, 0.0))
            if host in self._last:
                await asyncio.sleep(max(0.0, self._last[host] + delay - loop.time()))
            self._last[host] = loop.time()


class _Crawler:
    def __init__(self, fetcher: Fetcher, scope: SiteScope, politeness: _Politeness) -> None:
        self.fetcher = fetcher
        self.scope = scope
        self.user_agent = fetcher.policy.user_agent
        self.politeness = politeness
        self._robots: dict[str, urllib.robotparser.RobotFileParser] = {}
        self._robots_locks: dict[str, asyncio.Lock] = {}

    async def get(self, url: str, *, read_types: frozenset[str] = HTML_TYPES) -> Fetched:
        """Raises FetchError; the body only for `read_types`; redirects kept on the site."""
        host = urlsplit(url).netloc
        async with self.politeness.slots:
            await self.politeness.wait_turn(host)
            return await self.fetcher.get(url, read_types=read_types, stay=self.scope.__contains__)

    async def allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        async with self._robots_locks.setdefault(origin, asyncio.Lock()):
            if origin not in self._robots:
                self._robots[origin] = await self._read_robots(origin)
        return self._robots[origin].can_fetch(self.user_agent, url)

    async def _read_robots(self, origin: str) -> urllib.robotparser.RobotFileParser:
        parser = urllib.robotparser.RobotFileParser(origin + "/robots.txt")
        try:
            fetched = await self.get(origin + "/robots.txt", read_types=frozenset({"text/plain"}))
        except FetchError as exc:
            log.warning("robots.txt of %s unreadable (%s): crawling as if allowed", origin, exc)
            fetched = None
        # As urllib.robotparser.read() does: 401/403 forbid everything, other errors nothing.
        if fetched is not None and fetched.status in (401, 403):
            parser.parse(["User-agent: *", "Disallow: /"])
        elif fetched is not None and fetched.status < 400:
            parser.parse(fetched.body.decode("utf-8", "replace").splitlines())
        else:
            parser.parse([])
        delay = parser.crawl_delay(self.user_agent)
        if delay:
            self.politeness.host_delay[urlsplit(origin).netloc] = float(delay)
        return parser


# -- the crawl ------------------------------------------------------------------------------------


async def crawl(
    start_urls: Iterable[str],
    *,
    fetcher: Fetcher,
    allow_domains: Iterable[str] | None = None,
    max_depth: int = 2,
    max_pages: int = 500,
    delay_s: float = 1.0,
    concurrency: int = 2,
    on_page: OnPage | None = None,
) -> CrawlResult:
    """Crawl breadth first; `on_page` is awaited with each new page, in crawl order."""
    result = CrawlResult()
    starts = [u for u in (normalise_url(s) for s in start_urls) if u]
    scope = SiteScope(starts, allow_domains or ())
    crawler = _Crawler(fetcher, scope, _Politeness(concurrency, delay_s))
    seen: set[str] = set(starts)
    files: set[str] = set()
    by_hash: dict[str, str] = {}

    async def visit(url: str, depth: int) -> tuple[LoadedDocument | None, list[str]] | None:
        """The page at `url` and the same-site links to follow, or None (recorded why)."""
        if not await crawler.allowed(url):
            result.skipped.append((url, "disallowed by robots.txt"))
            return None
        try:
            fetched = await crawler.get(url)
        except FetchError as exc:
            log.warning("crawl: skipped %s: %s", url, exc.reason)
            result.skipped.append((url, exc.reason))
            return None
        final = normalise_url(fetched.url) or url
        if final != url and final not in scope:
            # The fetcher stops at an off-site redirect: this is only a second guard.
            result.skipped.append((url, f"redirected off-site to {final}"))
            return None
        if fetched.status >= 400:
            log.warning("crawl: skipped %s: HTTP %d", url, fetched.status)
            result.skipped.append((url, f"HTTP {fetched.status}"))
            return None
        if fetched.content_type in DOCUMENT_TYPES:
            add_file(final)
            return None
        if fetched.content_type not in HTML_TYPES:
            result.skipped.append((url, f"not HTML ({fetched.content_type})"))
            return None
        page = extract_page(fetched.body, fetched.url, encoding=fetched.charset)
        if not any(ch.isalnum() for ch in page.markdown):
            # A menu-only page (a portal's landing page) is not a document, but leads to some.
            result.skipped.append((url, "no main text"))
            return None, _site_links(page.all_links)
        content_hash = markdown_hash(page.markdown)
        # Redirects make one page reachable under two URLs; equal main text under two paths too.
        kept = by_hash.get(content_hash)
        if kept is not None or (final != url and final in seen_pages):
            result.duplicates.append((url, kept or final))
            return None
        by_hash[content_hash] = final
        seen_pages.add(final)
        content_links = [link for link in _site_links(page.links) if link != final]
        doc = page_document(page, final, links=content_links, depth=depth)
        return doc, _site_links(page.all_links)

    def _site_links(urls: Iterable[str]) -> list[str]:
        out: dict[str, None] = {}
        for raw in urls:
            url = normalise_url(raw)
            if url and url in scope:
                out[url] = None
        return list(out)

    def add_file(url: str) -> None:
        if url not in files:
            files.add(url)
            result.files.append(url)

    async def add_document_link(url: str) -> None:
        if await crawler.allowed(url):
            add_file(url)
        else:
            result.skipped.append((url, "disallowed by robots.txt"))

    seen_pages: set[str] = set()
    level = starts
    for depth in range(max_depth + 1):
        following: list[str] = []
        queue = list(level)
        while queue and len(result.pages) < max_pages:
            room = max_pages - len(result.pages)
            batch, queue = queue[:room], queue[room:]
            outcomes = await asyncio.gather(*(visit(url, depth) for url in batch))
            for outcome in outcomes:
                if outcome is None:
                    continue
                doc, links = outcome
                if doc is not None:
                    result.pages.append(doc)
                    if on_page is not None:
                        await on_page(doc)
                # A linked file is one hop further, as a linked page is: --depth 0 takes neither.
                for link in links if depth < max_depth else ():
                    if link in seen:
                        continue
                    seen.add(link)
                    if is_document_link(link):
                        await add_document_link(link)
                    else:
                        following.append(link)
        if queue:
            log.info("crawl: max_pages (%d) reached, %d URL(s) left", max_pages, len(queue))
            break
        level = following
    return result
