"""``tuvan eval dialogues``: a dialogue file asked in session order through the web chat's API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bot.cli.commands.evaluate.inputs import DIR, FILE, knowledge_of, server_option
from bot.cli.commands.evaluate.output import show_report
from bot.cli.common import pass_settings, progress_bars, run, user_errors
from bot.core.settings import Settings
from bot.runtime import build_parts


@click.command("dialogues")
@click.argument("dialogues_file", type=FILE)
@click.option("--corpus", type=DIR, help="The knowledge's documents (default: the demo's).")
@click.option("--faq", type=FILE, help="Its FAQ (JSONL, with --corpus).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@server_option
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
        knowledge = knowledge_of(corpus, None, faq) if corpus is not None else None
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
    show_report(out, data, markdown, lambda d: [])
