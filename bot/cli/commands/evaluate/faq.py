"""``tuvan eval faq``: tier 1 alone on an FAQ and its queries, at the risk target."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.cli.commands.evaluate.inputs import FILE, server_option
from bot.cli.commands.evaluate.output import show_report
from bot.cli.common import pass_settings, progress_bars, run, user_errors
from bot.core.settings import Settings
from bot.runtime import build_parts

if TYPE_CHECKING:
    from bot.evaluation.faq import FaqEvaluation


@click.command("faq")
@click.argument("faq_file", type=FILE)
@click.argument("queries_file", type=FILE)
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
@server_option
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
    evaluation = evaluate_faq_file(
        settings, faq_file, queries_file, server_url, enrich=enrich, unaccented=unaccented
    )
    data, markdown = faq_report(evaluation)
    show_report(out, data, markdown, lambda d: faq_plots(evaluation, d))


def evaluate_faq_file(
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
