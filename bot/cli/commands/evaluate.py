"""``tuvan eval questions|faq|calibrate|dialogues|facts``: the commands parse and print; the
work is in ``bot.evaluation``.

The evaluation package (plots, the judge's client) is imported when an ``eval`` command runs, not
when ``tuvan`` starts: it adds about a second to every other command.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bot.cli.common import pass_settings, progress_bars, run, user_errors, with_runtime
from bot.core.settings import LlmSettings, Settings
from bot.runtime import Runtime, build_parts

if TYPE_CHECKING:
    from bot.evaluation.calibration import DocPoint
    from bot.evaluation.faq import FaqEvaluation
    from bot.evaluation.metrics import Choice

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
# The chunker names, spelled out so that `--help` needs no import of the retrieval package
# (tests/bot/evaluation/test_questions.py checks them against retrieval.chunking).
_CHUNKERS = ("auto", "structure", "markdown", "legal", "semantic")
_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in value.split(",") if k.strip()}))
    except ValueError as exc:
        raise click.BadParameter(f"expected numbers like 1,3,5,10, got {value!r}") from exc
    if not ks or ks[0] < 1:
        raise click.BadParameter("k values must be positive")
    return ks


def _knowledge(
    corpus: Path | None,
    chunks: Path | None,
    faq: Path | None,
    *,
    chunker: str | None = None,
    context_header: bool = True,
) -> Any:
    from bot.evaluation.data import read_faq_items, read_passages
    from bot.evaluation.questions import Knowledge

    if (corpus is None) == (chunks is None):
        raise click.UsageError("give exactly one of --corpus DIR and --chunks CHUNKS.jsonl")
    if chunker is not None and corpus is None:
        raise click.UsageError("--chunker cuts a --corpus folder; --chunks are indexed as given")
    return Knowledge(
        corpus=corpus,
        passages=read_passages(chunks) if chunks else None,
        faq=read_faq_items(faq) if faq else None,
        chunker=chunker,  # type: ignore[arg-type]  # a click.Choice of CHUNKER_MODES
        context_header=context_header,
    )


def _write(
    out: Path | None, data: dict[str, Any], markdown: str, plots: Callable[[Path], Any]
) -> None:
    from bot.evaluation.report import write_report

    click.echo(markdown)
    if out is not None:
        write_report(out, data, markdown, plots)
        click.echo(f"\nreport.json, report.md and plots written to {out}", err=True)


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


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval, tiers and answers on question sets (throwaway database)."""


_server_option = click.option(
    "--server-url",
    default=None,
    help="Create the throwaway database on this PostgreSQL server (role needs CREATEDB) "
    "instead of starting a private embedded one.",
)


@eval_group.command("questions")
@click.argument("questions_file", type=_FILE)
@click.option("--corpus", type=_DIR, help="A folder ingested with tuvan's pipeline.")
@click.option("--chunks", type=_FILE, help="Pre-cut passages (JSONL), indexed as they are.")
@click.option("--faq", type=_FILE, help="FAQ entries to load too, so tier 1 takes part.")
@click.option(
    "--chunker",
    type=click.Choice(_CHUNKERS),
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
@_server_option
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
        knowledge = _knowledge(corpus, chunks, faq, chunker=chunker, context_header=context_header)
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
    _write(out, data, markdown, lambda d: questions_plots(evaluation, data, d))


@eval_group.command("dialogues")
@click.argument("dialogues_file", type=_FILE)
@click.option("--corpus", type=_DIR, help="The knowledge's documents (default: the demo's).")
@click.option("--faq", type=_FILE, help="Its FAQ (JSONL, with --corpus).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@_server_option
@pass_settings
def eval_dialogues(
    settings: Settings,
    dialogues_file: Path,
    corpus: Path | None,
    faq: Path | None,
    out: Path | None,
    server_url: str | None,
) -> None:
    """Ask DIALOGUES_FILE in session order through the web chat's API, as students would;
    report correct, confidently wrong and fallbacks, by kind (over the demo knowledge base
    unless --corpus)."""
    from bot.evaluation.dialogues import dialogues_report, read_dialogues
    from bot.evaluation.workspace import Workspace
    from bot.web.dialogues import dialogues_through_web_chat

    with user_errors():
        turns = read_dialogues(dialogues_file)
        knowledge = _knowledge(corpus, None, faq) if corpus is not None else None
        parts = build_parts(settings)

    async def load(workspace: Workspace) -> None:
        from bot.evaluation.questions import load_knowledge

        assert knowledge is not None
        await load_knowledge(workspace, parts, knowledge, None)

    async def main() -> Any:
        with progress_bars() as bars:
            return await dialogues_through_web_chat(
                parts,
                turns,
                load=load if knowledge is not None else None,
                server_url=server_url,
                on_turn=bars("dialogue questions", len(turns)),
            )

    evaluation = run(main())
    data, markdown = dialogues_report(evaluation, dialogues_file.name)
    _write(out, data, markdown, lambda d: [])


@eval_group.command("faq")
@click.argument("faq_file", type=_FILE)
@click.argument("queries_file", type=_FILE)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--enrich", is_flag=True, help="Add generated variants first (`tuvan faq enrich`).")
@click.option(
    "--risk",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Decide at this risk target instead of TUVAN_ANSWER__FAQ_RISK.",
)
@click.option(
    "--unaccented",
    is_flag=True,
    help="Ask every query a second time without diacritics; report both side by side.",
)
@_server_option
@pass_settings
def eval_faq(
    settings: Settings,
    faq_file: Path,
    queries_file: Path,
    out: Path | None,
    enrich: bool,
    risk: float | None,
    unaccented: bool,
    server_url: str | None,
) -> None:
    """Tier 1 alone: precision, coverage and false accepts at the risk target, the coverage
    each fitted risk target gives, and the curve over the threshold."""
    from bot.evaluation.faq_report import faq_plots, faq_report

    if risk is not None:
        answer = settings.answer.model_copy(update={"faq_risk": risk})
        settings = settings.model_copy(update={"answer": answer})
    evaluation = _evaluate_faq(
        settings, faq_file, queries_file, server_url, enrich=enrich, unaccented=unaccented
    )
    data, markdown = faq_report(evaluation)
    _write(out, data, markdown, lambda d: faq_plots(evaluation, d))


def _evaluate_faq(
    settings: Settings,
    faq_file: Path,
    queries_file: Path,
    server_url: str | None,
    *,
    enrich: bool = False,
    unaccented: bool = False,
) -> FaqEvaluation:
    from bot.evaluation.data import read_faq_items, read_faq_queries
    from bot.evaluation.faq import evaluate_faq

    with user_errors():
        items = read_faq_items(faq_file)
        queries = read_faq_queries(queries_file, {i.id for i in items})
        parts = build_parts(settings)

    async def main() -> FaqEvaluation:
        with progress_bars() as bars:
            return await evaluate_faq(
                parts,
                items,
                queries,
                server_url=server_url,
                on_query=bars("FAQ queries", len(queries) * (2 if unaccented else 1)),
                enrich=enrich,
                unaccented=unaccented,
            )

    return run(main())


@eval_group.command("calibrate")
@click.argument("faq_file", type=_FILE)
@click.argument("queries_file", type=_FILE)
@click.option(
    "--questions",
    "questions_file",
    type=_FILE,
    help="Also choose t_doc on this questions file (with --corpus or --chunks).",
)
@click.option("--corpus", type=_DIR)
@click.option("--chunks", type=_FILE)
@click.option(
    "--doc-precision",
    default=0.90,
    show_default=True,
    type=float,
    help="Precision the documents tier must keep.",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option(
    "--save",
    is_flag=True,
    help="Store the chosen t_doc in the live index for the current embedder.",
)
@_server_option
@pass_settings
def eval_calibrate(
    settings: Settings,
    faq_file: Path,
    queries_file: Path,
    questions_file: Path | None,
    corpus: Path | None,
    chunks: Path | None,
    doc_precision: float,
    out: Path | None,
    save: bool,
    server_url: str | None,
) -> None:
    """Tier 1's coverage at each risk target on your FAQ (its threshold calibrates itself),
    and t_doc: the most coverage that keeps the documents tier's required precision."""
    from bot.evaluation.calibration import Calibration
    from bot.evaluation.faq_report import faq_plots
    from bot.evaluation.questions_report import doc_calibration_plot
    from bot.evaluation.report import prepare_out, write_json

    evaluation = _evaluate_faq(settings, faq_file, queries_file, server_url)
    calibration = Calibration(evaluation.embedder, evaluation.written.per_risk)
    if questions_file is not None:
        doc_choice, doc_points = _calibrate_doc(
            settings, questions_file, corpus, chunks, doc_precision, server_url
        )
        calibration = replace(
            calibration, doc=doc_choice, doc_precision=doc_precision, doc_points=doc_points
        )
    for line in calibration.lines():
        click.echo(line)
    chosen = calibration.chosen
    for key, value in chosen.items():
        click.echo(f"TUVAN_ANSWER__{key.upper()}={value:.3f}")
    if out is not None:
        prepare_out(out)
        write_json(out, calibration.to_json())
        faq_plots(evaluation, out)
        if calibration.doc is not None:
            doc_calibration_plot(calibration.doc_points, calibration.doc, out)
    if save:
        _save(settings, chosen)


def _calibrate_doc(
    settings: Settings,
    questions_file: Path,
    corpus: Path | None,
    chunks: Path | None,
    required: float,
    server_url: str | None,
) -> tuple[Choice, list[DocPoint]]:
    from bot.evaluation.calibration import calibrate_t_doc
    from bot.evaluation.data import read_questions

    with user_errors():
        questions = read_questions(questions_file)
        knowledge = _knowledge(corpus, chunks, None)
        parts = build_parts(settings)

    async def main() -> tuple[Choice, list[DocPoint]]:
        with progress_bars() as bars:
            return await calibrate_t_doc(
                parts,
                questions,
                knowledge,
                required_precision=required,
                server_url=server_url,
                progress=bars,
            )

    return run(main())


def _save(settings: Settings, chosen: dict[str, float]) -> None:
    from bot.evaluation.calibration import store_thresholds

    if not chosen:
        click.echo("nothing to save: no threshold met its required precision", err=True)
        sys.exit(1)

    async def body(rt: Runtime) -> None:
        await store_thresholds(rt.sessionmaker, chosen)
        click.echo(
            f"saved for {rt.parts.embedder.name}: "
            + ", ".join(f"{k} {v:.3f}" for k, v in chosen.items())
        )

    with_runtime(settings, body)


@eval_group.command("facts")
@click.argument("cases_file", type=_FILE)
@click.option("--corpus", type=_DIR, required=True, help="The knowledge's documents.")
@click.option("--faq", type=_FILE, help="Its FAQ (JSONL), so tier 1 takes part.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@_server_option
@pass_settings
def eval_facts(
    settings: Settings,
    cases_file: Path,
    corpus: Path,
    faq: Path | None,
    out: Path | None,
    server_url: str | None,
) -> None:
    """Score checks, "does the school have X" and ambiguous score checks of CASES_FILE, asked
    as written and folded over --corpus: right and confidently wrong by kind (issue 2/4)."""
    from bot.answer.answerer import Answerer
    from bot.evaluation.facts import ask_facts, facts_report, read_facts_cases
    from bot.evaluation.questions import load_knowledge
    from bot.evaluation.workspace import throwaway_database

    with user_errors():
        cases = read_facts_cases(cases_file)
        knowledge = _knowledge(corpus, None, faq)
        parts = build_parts(settings)

    async def main() -> Any:
        async with throwaway_database(server_url) as workspace:
            with progress_bars() as bars:
                await load_knowledge(workspace, parts, knowledge, None)
                answerer = Answerer(parts, workspace.sessionmaker)
                return await ask_facts(
                    cases, answerer.answer, on_case=bars("questions", 2 * len(cases))
                )

    outcomes = run(main())
    data, markdown = facts_report(outcomes, cases_file.name)
    _write(out, data, markdown, lambda d: [])
