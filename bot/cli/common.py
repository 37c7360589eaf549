"""What the ``tuvan`` commands share: settings, running a coroutine, the runtime, progress bars."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from bot.core.errors import TuvanError
from bot.core.settings import Settings
from bot.knowledge.contents import knowledge_size
from bot.knowledge.jobs import Progress, ProgressBars
from bot.runtime import Runtime, no_announce, open_runtime

T = TypeVar("T")

pass_settings = click.make_pass_decorator(Settings)


@contextmanager
def user_errors() -> Iterator[None]:
    """tuvan's own errors (a bad input file, a bad setting) are the user's to fix: a one-line
    message naming what and where, exit 1, no traceback."""
    try:
        yield
    except TuvanError as exc:
        raise click.ClickException(str(exc)) from exc


def run(coro: Awaitable[T]) -> T:
    """Run a command's coroutine; tuvan's own errors become a one-line message, exit 1."""
    with user_errors():
        return asyncio.run(coro)  # type: ignore[arg-type]


class StageLines:
    """Plain lines on standard error as a long start goes through its stages
    ("[  12 s] loading the models…"). They show in a log as on a terminal, where a progress
    bar shows nothing, so a first start that takes a minute is never a silent minute."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def __call__(self, stage: str) -> None:
        self.say(f"{stage}…")

    def say(self, line: str) -> None:
        """A line that ends a stage ("loaded …"), with the same clock."""
        click.echo(f"[{time.monotonic() - self.started:4.0f} s] {line}", err=True)


def with_runtime(
    settings: Settings,
    body: Callable[[Runtime], Awaitable[T]],
    *,
    check_index: bool = True,
    announce: Callable[[str], None] = no_announce,
) -> T:
    async def main() -> T:
        async with open_runtime(settings, check_index=check_index, announce=announce) as runtime:
            return await body(runtime)

    return run(main())


def empty_knowledge_warning(settings: Settings) -> str:
    """What to say when the store holds no published FAQ entry and no document."""
    if settings.database_url is None:
        where = f"the embedded database in {settings.data_dir / 'pg'}"
    else:
        where = "the database of TUVAN_DATABASE_URL"
    return (
        f"warning: the knowledge base in {where} is empty (no published FAQ entry, no "
        "document), so every question gets the fallback. Load one with "
        "`tuvan ingest FOLDER_OR_URL` and `tuvan faq import FAQ_FILE`, "
        "or try the demo data with `tuvan demo`."
    )


async def warn_if_empty(runtime: Runtime) -> None:
    if (await knowledge_size(runtime.sessionmaker)).empty:
        click.echo(empty_knowledge_warning(runtime.settings), err=True)


def progress(total: int | None, desc: str, unit: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, leave=False)


@contextmanager
def progress_bars(unit: str = "step") -> Iterator[ProgressBars]:
    """Progress bars on standard error for a use-case's stages, all closed on the way out."""
    opened: list[Any] = []

    def make(label: str, total: int | None) -> Progress:
        bar = progress(total or None, label, unit)
        opened.append(bar)
        return bar.update  # type: ignore[no-any-return]

    try:
        yield make
    finally:
        for bar in opened:
            bar.close()
