"""``tuvan augment``: URAG-D document augmentation with the LLM
(``bot.knowledge.document_augment``), or extractive summaries without one
(``bot.knowledge.extractive_summaries``)."""

from __future__ import annotations

import click

from bot.cli.common import pass_settings, progress_bars, with_runtime
from bot.core.settings import Settings
from bot.knowledge.document_augment import (
    DocumentAugmentJob,
    DocumentAugmentOptions,
    DocumentAugmentReport,
)
from bot.knowledge.extractive_summaries import ExtractiveSummaryJob
from bot.knowledge.jobs import OfflineJob
from bot.llm.batch import BatchLimits
from bot.runtime import Runtime

NEEDS_LLM = (
    "tuvan augment needs an LLM: set TUVAN_LLM__BASE_URL (and TUVAN_LLM__MODEL, "
    "TUVAN_LLM__API_KEY) to an OpenAI-compatible endpoint. Without one there is nothing to do: "
    "every chunk is already embedded and keyword-indexed behind its contextual header. "
    "--dry-run estimates the calls; --extractive-summaries writes summaries without an LLM."
)


@click.command("augment")
@click.option("--dry-run", is_flag=True, help="Count the LLM calls and tokens; change nothing.")
@click.option("--force", is_flag=True, help="Redo documents and chunks augmented before.")
@click.option("--no-summaries", is_flag=True, help="Contexts and chunk rewrites only.")
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="S",
    help="Only this source as `tuvan sources` lists it, or a prefix (a folder, a site); "
    "repeatable.",
)
@click.option(
    "--extractive-summaries",
    is_flag=True,
    help="No LLM: summaries from each document's title, opening lines and headings (a "
    "baseline for TUVAN_SEARCH__MODE=summary, not URAG-D).",
)
@pass_settings
def augment_command(
    settings: Settings,
    dry_run: bool,
    force: bool,
    no_summaries: bool,
    sources: tuple[str, ...],
    extractive_summaries: bool,
) -> None:
    """Rewrite chunks with their document's context, and summarise documents (URAG-D).

    With the LLM (TUVAN_LLM__BASE_URL), per document: its general context; each chunk rewritten
    to stand on its own, a one-sentence summary in front (what is then embedded and searched;
    answers still quote the original); a summary for the summary-first search mode. Numbers,
    dates and codes must survive a rewrite, or the chunk keeps its original text. Resumable: a
    re-run does only what is missing. Without an LLM there is nothing to do: the deterministic
    contextual header (title › headings, page) is already in front of every chunk.
    """
    if not settings.llm.enabled and not dry_run and not extractive_summaries:
        raise click.ClickException(NEEDS_LLM)
    options = DocumentAugmentOptions(force=force, summaries=not no_summaries, sources=sources)

    async def body(rt: Runtime) -> None:
        job: OfflineJob[DocumentAugmentReport]
        if extractive_summaries:
            job = ExtractiveSummaryJob(rt.sessionmaker, rt.indexer, options)
        else:
            limits = BatchLimits.of(settings.llm)
            job = DocumentAugmentJob(rt.sessionmaker, rt.indexer, rt.parts.llm, options, limits)
        if dry_run:
            report = await job.plan()
        else:
            with progress_bars("call") as bars:
                report = await job.run(bars)
        if sources and not report.documents:
            raise click.ClickException(
                f"no indexed source matches {', '.join(sources)}: see `tuvan sources`"
            )
        if extractive_summaries:
            verb = "would write" if dry_run else "wrote"
            click.echo(
                f"{verb} {report.planned if dry_run else report.summaries} extractive summaries "
                f"(title, opening lines and headings; no LLM) for {report.documents} documents"
            )
            return
        if dry_run:
            click.echo(
                f"would augment {report.documents} documents: {report.planned} jobs, "
                f"{report.estimate}; {report.already_done} chunks already augmented "
                "(--force redoes them)"
            )
            return
        click.echo(
            f"augmented {report.documents} documents: {report.contexts} contexts, "
            f"{report.chunks} chunks ({report.kept_original} kept as written: the rewrite "
            f"changed a number), {report.summaries} summaries; {report.already_done} chunks "
            f"were done already; {report.calls} LLM calls"
        )
        for what, why in report.failed:
            click.echo(f"  failed: {what}: {why}", err=True)
        if report.failed:
            click.echo(f"{len(report.failed)} failed; run again to retry them", err=True)

    with_runtime(settings, body)
