"""``tuvan faq import|check|enrich|export|generate``: the FAQ from and to files, checked, and
enriched with generated phrasings and drafts (the work is in ``bot.knowledge``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bot.cli.common import pass_settings, progress, progress_bars, user_errors, with_runtime
from bot.core.settings import Settings
from bot.db.models import FaqStatus
from bot.knowledge.faq_check import check_entries
from bot.knowledge.faq_drafts import FaqDraftJob, FaqDraftOptions
from bot.knowledge.faq_files import export_faq, import_faq, read_faq_file
from bot.knowledge.faq_paraphrases import FaqParaphraseJob, FaqParaphraseOptions
from bot.llm.batch import BatchLimits
from bot.runtime import Runtime


@click.group("faq")
def faq_group() -> None:
    """Import or export the FAQ (JSONL, CSV, YAML, Excel .xlsx)."""


@faq_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--draft", is_flag=True, help="Import as drafts (not answering until published).")
@pass_settings
def faq_import(settings: Settings, file: Path, draft: bool) -> None:
    """Create or update FAQ entries from FILE (matched on their id)."""
    with user_errors():  # a bad row: say where, no traceback
        drafts = read_faq_file(file)

    async def body(rt: Runtime) -> None:
        bar = progress(len(drafts), "FAQ", "entry")
        try:
            ids = await import_faq(
                rt.sessionmaker,
                rt.indexer,
                drafts,
                updated_by="cli:import",
                status=FaqStatus.draft if draft else None,
                progress=bar.update,
            )
        finally:
            bar.close()
        click.echo(f"imported {len(drafts)} FAQ entries from {file}")
        if not draft:
            async with rt.sessionmaker() as session:
                report = await check_entries(rt.answerer, session, ids)
            click.echo(f"{report.summary} (details: tuvan faq check)")

    with_runtime(settings, body)


@faq_group.command("check")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per problem.")
@pass_settings
def faq_check(settings: Settings, as_json: bool) -> None:
    """Ask every published phrasing as a student would (not word for word) and list those not
    answered by their own entry, answered by another entry, or refused by the guard."""

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


@faq_group.command("enrich")
@click.option("--n", "count", default=10, show_default=True, help="Paraphrases per question.")
@click.option("--force", is_flag=True, help="Replace generated variants made before.")
@click.option("--dry-run", is_flag=True, help="Count the entries and LLM calls; change nothing.")
@pass_settings
def faq_enrich(settings: Settings, count: int, force: bool, dry_run: bool) -> None:
    """Add generated phrasings to published FAQ questions (with the LLM if configured)."""
    options = FaqParaphraseOptions(n=count, force=force)

    async def body(rt: Runtime) -> None:
        job = FaqParaphraseJob(
            rt.sessionmaker, rt.indexer, rt.parts.llm, options, BatchLimits.of(settings.llm)
        )
        if dry_run:
            planned = await job.plan()
            click.echo(
                f"would enrich {planned.entries} entries (up to {count} paraphrases each: "
                f"{planned.estimate}); {planned.skipped} already enriched"
            )
            return
        with progress_bars("entry") as bars:
            report = await job.run(bars)
        how = "the LLM and shorthand" if rt.parts.llm else "shorthand only (no LLM configured)"
        click.echo(
            f"enriched {report.entries} entries with {report.variants} variants ({how}); "
            f"{report.skipped} already enriched (--force replaces)"
        )
        for entry, reason in report.failed:
            click.echo(f"  {entry}: LLM failed ({reason}); shorthand variants only", err=True)

    with_runtime(settings, body)


@faq_group.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@pass_settings
def faq_export(settings: Settings, file: Path) -> None:
    """Write every FAQ entry (with staff variants) to FILE."""

    async def body(rt: Runtime) -> None:
        n = await export_faq(rt.sessionmaker, file)
        click.echo(f"exported {n} FAQ entries to {file}")

    with_runtime(settings, body, check_index=False)


@faq_group.command("generate")
@click.option(
    "--per-chunk",
    default=3,
    show_default=True,
    type=click.IntRange(1, 20),
    help="Question-answer pairs asked for per chunk.",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    help="Only this source, or the sources starting with it (repeatable; see `tuvan sources`).",
)
@click.option("--dry-run", is_flag=True, help="Count the chunks and estimate the LLM calls.")
@click.option("--force", is_flag=True, help="Ask again; replaces untouched unpublished drafts.")
@click.option(
    "--paraphrases",
    default=5,
    show_default=True,
    type=click.IntRange(0, 30),
    help="Phrasings generated per drafted question (0: none).",
)
@pass_settings
def faq_generate(
    settings: Settings,
    per_chunk: int,
    sources: tuple[str, ...],
    dry_run: bool,
    force: bool,
    paraphrases: int,
) -> None:
    """Draft FAQ entries from document chunks with the LLM (drafts: staff publish them)."""
    if not dry_run and not settings.llm.enabled:
        raise click.UsageError(
            "faq generate needs an LLM: set TUVAN_LLM__BASE_URL (--dry-run works without one)"
        )
    options = FaqDraftOptions(per_chunk, sources, force, paraphrases)

    async def body(rt: Runtime) -> None:
        job = FaqDraftJob(
            rt.sessionmaker, rt.indexer, rt.parts.llm, options, BatchLimits.of(settings.llm)
        )
        if dry_run:
            report = await job.plan()
        else:
            with progress_bars("chunk") as bars:
                report = await job.run(bars)
        if report.unmatched:
            raise click.ClickException(
                f"no source matches {', '.join(report.unmatched)}: see `tuvan sources`"
            )
        if dry_run:
            click.echo(
                f"would ask about {report.chunks} chunks ({report.skipped} done for their "
                f"current version): {report.estimate}"
            )
            return
        click.echo(
            f"{report.drafts} drafts from {report.chunks} chunks ({report.skipped} done before), "
            f"{report.rejected} pairs dropped for numbers not in their chunk, "
            f"{report.replaced} earlier drafts replaced, {report.variants} phrasings; "
            f"{report.llm_calls} LLM calls. Drafts answer only once staff publish them."
        )
        for where, reason in report.failed:
            click.echo(f"  {where}: {reason}", err=True)

    with_runtime(settings, body)
