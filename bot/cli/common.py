"""What the ``tuvan`` commands share: settings, running a coroutine, the runtime, progress bars."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from bot.core.errors import TuvanError
from bot.core.settings import Settings
from bot.knowledge.jobs import Progress, ProgressBars
from bot.runtime import Runtime, open_runtime

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


def with_runtime(
    settings: Settings, body: Callable[[Runtime], Awaitable[T]], *, check_index: bool = True
) -> T:
    async def main() -> T:
        async with open_runtime(settings, check_index=check_index) as runtime:
            return await body(runtime)

    return run(main())


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
