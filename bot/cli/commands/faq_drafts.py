"""``tuvan faq generate``: FAQ drafts from the indexed documents (bot.knowledge.faq_drafts)."""

from __future__ import annotations

import click

from bot.cli.common import pass_settings, progress, with_runtime
from bot.core.settings import Settings
from bot.runtime import Runtime


@click.command("generate")
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
def faq_generate_command(
    settings: Settings,
    per_chunk: int,
    sources: tuple[str, ...],
    dry_run: bool,
    force: bool,
    paraphrases: int,
) -> None:
    """Draft FAQ entries from document chunks with the LLM (drafts: staff publish them)."""
    from bot.knowledge.faq_drafts import generate_faq

    if not dry_run and not settings.llm.enabled:
        raise click.UsageError(
            "faq generate needs an LLM: set TUVAN_LLM__BASE_URL (--dry-run works without one)"
        )

    async def body(rt: Runtime) -> None:
        chunks = progress(None, "chunks", "chunk")
        entries = progress(None, "phrasings", "entry")
        try:
            report = await generate_faq(
                rt.sessionmaker,
                rt.indexer,
                rt.parts.llm,
                per_chunk=per_chunk,
                sources=sources,
                force=force,
                dry_run=dry_run,
                paraphrases=paraphrases,
                concurrency=settings.llm.concurrency,
                attempts=settings.llm.attempts,
                max_tokens=settings.llm.max_tokens,
                on_chunk=chunks.update,
                on_entry=entries.update,
            )
        finally:
            chunks.close()
            entries.close()
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
