"""``tuvan crawl URL...``: crawl a web site and index its pages (and the PDFs it links to).

Each page is indexed in its own transaction as it arrives, so an interrupted crawl keeps what it
indexed, and a page whose main text has not changed since the last crawl is left alone (the work
is ``bot.knowledge.ingest``; this module parses and prints).
"""

from __future__ import annotations

import click

from bot.cli.common import pass_settings, progress_bars, with_runtime
from bot.core.settings import Settings
from bot.knowledge.ingest import CrawlOptions, CrawlReport, crawl_and_index, pdf_options
from bot.runtime import Runtime
from retrieval.crawl.fetch import FetchPolicy


def echo_crawl(report: CrawlReport) -> None:
    """What a crawl did, in one line, then each page or file skipped and why."""
    crawled, stored = report.crawl, report.stored
    click.echo(
        f"crawled {len(crawled.pages)} pages, {len(crawled.duplicates)} duplicates, "
        f"{len(crawled.files)} files; indexed {len(stored.indexed)} documents ({stored.chunks} "
        f"chunks), {len(stored.unchanged)} unchanged, "
        f"{len(report.skipped)} skipped"
    )
    for url, reason in report.skipped:
        click.echo(f"  skipped {url}: {reason}", err=True)


@click.command("crawl")
@click.argument("urls", nargs=-1, required=True)
@click.option(
    "--depth", default=2, show_default=True, type=click.IntRange(min=0), help="Link hops from URL."
)
@click.option("--max-pages", default=500, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--delay",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds between requests to one host.",
)
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--allow-domain",
    "allow_domains",
    multiple=True,
    help="Also follow links to this domain (repeatable).",
)
@click.option("--no-files", is_flag=True, help="Do not download and index the PDFs linked.")
@pass_settings
def crawl_command(
    settings: Settings,
    urls: tuple[str, ...],
    depth: int,
    max_pages: int,
    delay: float,
    concurrency: int,
    allow_domains: tuple[str, ...],
    no_files: bool,
) -> None:
    """Crawl the web site at URL (same domain, robots.txt honoured) and index its pages."""
    options = CrawlOptions(
        depth,
        max_pages,
        delay,
        concurrency,
        allow_domains,
        not no_files,
        pdf_options(settings.ingest),
        FetchPolicy.from_settings(settings.ingest),
    )

    async def body(rt: Runtime) -> None:
        with progress_bars() as bars:
            report = await crawl_and_index(rt.sessionmaker, rt.indexer, urls, options, bars)
        echo_crawl(report)

    with_runtime(settings, body)
