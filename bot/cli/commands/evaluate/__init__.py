"""``tuvan eval questions|faq|calibrate|dialogues|facts``: the commands parse and print; the
work is in ``bot.evaluation``.

The evaluation package (plots, the judge's client) is imported when an ``eval`` command runs, not
when ``tuvan`` starts: it adds about a second to every other command.

One module per command; what they take (inputs) and give (output) is shared.
"""

from __future__ import annotations

import click

from bot.cli.commands.evaluate.calibrate import eval_calibrate
from bot.cli.commands.evaluate.dialogues import eval_dialogues
from bot.cli.commands.evaluate.facts import eval_facts
from bot.cli.commands.evaluate.faq import eval_faq
from bot.cli.commands.evaluate.questions import eval_questions


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval, tiers and answers on question sets (throwaway database)."""


for command in (eval_questions, eval_dialogues, eval_faq, eval_calibrate, eval_facts):
    eval_group.add_command(command)
