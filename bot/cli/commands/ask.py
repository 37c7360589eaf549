"""``tuvan ask QUESTION`` and ``tuvan chat``: questions answered from the terminal."""

from __future__ import annotations

import asyncio
import json

import click

from bot.answer.replies import Answer
from bot.cli.common import pass_settings, warn_if_empty, with_runtime
from bot.core.settings import Settings
from bot.runtime import Runtime


def human(answer: Answer) -> str:
    """An answer as a person reads it: the text, then its tier, time and reason."""
    tier = {"faq": "FAQ", "documents": "documents", "fallback": "fallback"}[answer.tier]
    total = answer.timings_ms.get("total", 0)
    return f"{answer.answer}\n\n[{tier} · {total:.0f} ms · {answer.reason}]"


@click.command("ask")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@pass_settings
def ask_command(settings: Settings, question: str, as_json: bool) -> None:
    """Answer one QUESTION."""

    async def body(rt: Runtime) -> None:
        await warn_if_empty(rt)
        answer = await rt.answerer.answer(question)
        if as_json:
            click.echo(json.dumps(answer.to_json(), ensure_ascii=False))
        else:
            click.echo(human(answer))

    with_runtime(settings, body)


@click.command("chat")
@pass_settings
def chat_command(settings: Settings) -> None:
    """Ask questions in the terminal (empty line or Ctrl-D quits)."""

    async def body(rt: Runtime) -> None:
        await warn_if_empty(rt)
        click.echo("tuvan: hỏi gì cũng được về tuyển sinh (dòng trống để thoát).")
        while True:
            try:
                line = await asyncio.to_thread(input, "› ")
            except EOFError:
                break
            if not line.strip():
                break
            answer = await rt.answerer.answer(line)
            click.echo(human(answer) + "\n")

    with_runtime(settings, body)
