"""Waiting in a test for something another task or process brings about."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(condition: Callable[[], bool], *, within_s: float = 20.0) -> None:
    """Return as soon as ``condition()`` holds, checked every 10 ms; fail after ``within_s``.

    The bound is generous on purpose: a passing test returns at the first moment the condition
    holds, so only a failing one waits it out, and a loaded CI machine (a slow commit, a busy
    core) never turns a slow pass into a failure."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"the condition did not hold within {within_s:g} s")
        await asyncio.sleep(0.01)
