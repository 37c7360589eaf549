"""``tuvan eval facts``: score checks and "does the school have X" asked over a corpus, scored
by kind (issue 2/4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bot.cli.commands.evaluate.inputs import DIR, FILE, knowledge_of, server_option
from bot.cli.commands.evaluate.output import show_report
from bot.cli.common import pass_settings, progress_bars, run, user_errors
from bot.core.settings import Settings
from bot.runtime import build_parts


@click.command("facts")
@click.argument("cases_file", type=FILE)
@click.option("--corpus", type=DIR, required=True, help="The knowledge's documents.")
@click.option("--faq", type=FILE, help="Its FAQ (JSONL), so tier 1 takes part.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@server_option
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
        knowledge = knowledge_of(corpus, None, faq)
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
    show_report(out, data, markdown, lambda d: [])
