"""``tuvan eval questions``: retrieval at k, tiers, key facts and out-of-scope handling on a
questions file, optionally graded by an LLM judge."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from bot.cli.commands.evaluate.inputs import DIR, FILE, knowledge_of, server_option
from bot.cli.commands.evaluate.output import show_report
from bot.cli.common import pass_settings, progress_bars, run, user_errors
from bot.core.settings import LlmSettings, Settings
from bot.runtime import build_parts

# The chunker names, spelled out so that `--help` needs no import of the retrieval package
# (tests/bot/evaluation/test_chunkers.py checks them against retrieval.chunking).
CHUNKERS = ("auto", "structure", "markdown", "legal", "semantic")


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in value.split(",") if k.strip()}))
    except ValueError as exc:
        raise click.BadParameter(f"expected numbers like 1,3,5,10, got {value!r}") from exc
    if not ks or ks[0] < 1:
        raise click.BadParameter("k values must be positive")
    return ks


def _judge_settings(settings: Settings, url: str | None, model: str | None) -> LlmSettings:
    base = settings.llm
    update: dict[str, Any] = {}
    if url:
        update["base_url"] = url
    if model:
        update["model"] = model
    judge = base.model_copy(update=update)
    if not judge.base_url:
        raise click.UsageError(
            "--judge needs an OpenAI-compatible endpoint: --judge-url or TUVAN_LLM__BASE_URL"
        )
    return judge


@click.command("questions")
@click.argument("questions_file", type=FILE)
@click.option("--corpus", type=DIR, help="A folder ingested with tuvan's pipeline.")
@click.option("--chunks", type=FILE, help="Pre-cut passages (JSONL), indexed as they are.")
@click.option("--faq", type=FILE, help="FAQ entries to load too, so tier 1 takes part.")
@click.option(
    "--chunker",
    type=click.Choice(CHUNKERS),
    default=None,
    help="Cut the --corpus with this chunker. Default: TUVAN_INGEST__CHUNKER.",
)
@click.option(
    "--no-context-header",
    "context_header",
    flag_value=False,
    default=True,
    help="Embed and index chunks without their 'title › headings' line.",
)
@click.option("--k", "ks", default="1,3,5,10", show_default=True, help="Cut-offs, comma-separated.")
@click.option(
    "--mode",
    "modes",
    multiple=True,
    help=(
        "dense, keyword, bm25, hybrid, hybrid+rerank, summary or hybrid+graph (repeatable). "
        "Default: the setting."
    ),
)
@click.option("--compare", is_flag=True, help="Every mode in one table (rerank if configured).")
@click.option(
    "--unaccented",
    is_flag=True,
    help="Ask every question a second time without diacritics; report both side by side.",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--judge", is_flag=True, help="Also grade answers with an LLM against `answer`.")
@click.option("--judge-url", default=None, help="Judge endpoint (default TUVAN_LLM__BASE_URL).")
@click.option("--judge-model", default=None, help="Judge model (default TUVAN_LLM__MODEL).")
@server_option
@pass_settings
def eval_questions(
    settings: Settings,
    questions_file: Path,
    corpus: Path | None,
    chunks: Path | None,
    faq: Path | None,
    chunker: str | None,
    context_header: bool,
    ks: str,
    modes: Sequence[str],
    compare: bool,
    unaccented: bool,
    out: Path | None,
    judge: bool,
    judge_url: str | None,
    judge_model: str | None,
    server_url: str | None,
) -> None:
    """Retrieval at k, tiers, key facts and out-of-scope handling for QUESTIONS_FILE."""
    from bot.evaluation.data import read_questions
    from bot.evaluation.judge import Judge
    from bot.evaluation.questions import MODES, evaluate_questions
    from bot.evaluation.questions_report import questions_plots, questions_report

    cut_offs = _ks(ks)
    with user_errors():
        questions = read_questions(questions_file)
        knowledge = knowledge_of(
            corpus, chunks, faq, chunker=chunker, context_header=context_header
        )
        parts = build_parts(settings)
    chosen: list[str]
    if compare:
        chosen = [m for m in MODES if m != "hybrid+rerank" or parts.reranker is not None]
    else:
        chosen = list(dict.fromkeys(modes)) or [settings.search.mode]
    grader = Judge(_judge_settings(settings, judge_url, judge_model)) if judge else None

    async def main() -> Any:
        try:
            with progress_bars() as bars:
                return await evaluate_questions(
                    parts,
                    questions,
                    knowledge,
                    modes=chosen,
                    ks=cut_offs,
                    server_url=server_url,
                    judge=grader,
                    progress=bars,
                    unaccented=unaccented,
                )
        finally:
            if grader is not None:
                await grader.aclose()

    evaluation = run(main())
    data, markdown = questions_report(evaluation)
    show_report(out, data, markdown, lambda d: questions_plots(evaluation, data, d))
