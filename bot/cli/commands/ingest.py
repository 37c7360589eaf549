"""``tuvan ingest SOURCE...`` and ``tuvan reindex``: documents into the knowledge base, and
everything re-embedded after a model change (the work is ``bot.knowledge.ingest``)."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.commands.crawl import echo_crawl
from bot.cli.common import pass_settings, progress, progress_bars, with_runtime
from bot.core.settings import Settings
from bot.knowledge.ingest import (
    CrawlOptions,
    crawl_and_index,
    expand_paths,
    ingest_paths,
    pdf_options,
    reindex_all,
    unsupported_by_type,
)
from bot.runtime import Runtime
from retrieval.crawl.fetch import FetchPolicy
from retrieval.loading import SUPPORTED_SUFFIXES
from retrieval.loading.document import LoadedDocument


@click.command("ingest")
@click.argument("sources", nargs=-1, required=True)
@pass_settings
def ingest_command(settings: Settings, sources: tuple[str, ...]) -> None:
    """Index documents: files or folders (PDF with OCR, DOCX, Markdown, HTML, text, CSV) and
    web pages or files by URL (one page each; `tuvan crawl` follows links)."""
    urls = [s for s in sources if s.startswith(("http://", "https://"))]
    paths = [Path(s) for s in sources if s not in urls]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise click.BadParameter(f"no such file or folder: {', '.join(missing)}")

    async def body(rt: Runtime) -> None:
        if paths:
            await _ingest_files(rt, paths)
        if urls:
            with progress_bars() as bars:
                pdf = pdf_options(rt.settings.ingest)
                fetch = FetchPolicy.from_settings(settings.ingest)
                options = CrawlOptions(depth=0, max_pages=len(urls), pdf=pdf, fetch=fetch)
                report = await crawl_and_index(rt.sessionmaker, rt.indexer, urls, options, bars)
            echo_crawl(report)
            refused = [url for url, reason in report.skipped if reason.startswith("refused:")]
            if refused:
                raise click.ClickException(
                    f"{len(refused)} URL(s) refused (reasons above); only public addresses are "
                    "fetched, and the private hosts listed in TUVAN_INGEST__ALLOW_PRIVATE_HOSTS"
                )

    with_runtime(settings, body)


async def _ingest_files(rt: Runtime, paths: list[Path]) -> None:
    files = list(expand_paths(paths))
    bar = progress(len(files), "files", "file")
    counts = {"pages": 0, "chunks": 0}

    def on_loaded(doc: LoadedDocument) -> None:
        counts["pages"] += int(doc.meta.get("page_count", 1))
        bar.set_postfix(counts, refresh=False)

    def on_chunks(n: int) -> None:
        counts["chunks"] += n
        bar.set_postfix(counts)

    try:
        report = await ingest_paths(
            rt.sessionmaker,
            rt.indexer,
            files,
            on_file=lambda _: bar.update(0),
            on_loaded=on_loaded,
            on_chunks=on_chunks,
            on_done=lambda _: bar.update(1),
            pdf=pdf_options(rt.settings.ingest),
        )
    finally:
        bar.close()
    click.echo(
        f"indexed {len(report.indexed)} documents ({report.chunks} chunks), "
        f"{len(report.unchanged)} unchanged, {len(report.skipped)} skipped; "
        f"{len(files)} files, {counts['pages']} pages read"
    )
    for source, reason in report.skipped:
        click.echo(f"  skipped {source}: {reason}", err=True)
    left_out = unsupported_by_type(paths)
    if left_out:
        kinds = ", ".join(f"{n} {suffix}" for suffix, n in left_out.items())
        supported = " ".join(sorted(SUPPORTED_SUFFIXES))
        click.echo(f"not indexed, a type tuvan does not read: {kinds} (it reads {supported})")


@click.command("reindex")
@pass_settings
def reindex_command(settings: Settings) -> None:
    """Re-embed every FAQ entry, variant and chunk with the configured embedder."""

    async def body(rt: Runtime) -> None:
        with progress_bars("text") as bars:
            done = await reindex_all(rt.sessionmaker, rt.indexer, bars)
        click.echo(f"re-embedded {done} texts with {rt.parts.embedder.name}")

    with_runtime(settings, body, check_index=False)
