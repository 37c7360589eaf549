"""The cap on web chat answers worked on at once in one serve process.

A request takes a place before its message is stored and gives it back once the answer is
stored (or the request ends without answering). One that finds every place taken waits a
little, then is refused (503 with Retry-After), so a flood meets a short line, never an
unbounded queue; what it refused was not stored, and the page sends it again.
"""

from __future__ import annotations

import asyncio


class Place:
    """A place taken at the gate; given back once, by ``release``. ``handed`` marks one that
    the answer's task gives back when it ends, not the request."""

    def __init__(self, gate: AnswerGate) -> None:
        self._gate = gate
        self._held = True
        self.handed = False

    def release(self) -> None:
        if self._held:
            self._held = False
            self._gate.give_back()


class AnswerGate:
    def __init__(self, places: int, wait_s: float) -> None:
        self.places = places
        self.wait_s = wait_s
        self._free = asyncio.Semaphore(places)
        self._taken = 0

    @property
    def taken(self) -> int:
        """Places in use now."""
        return self._taken

    async def enter(self) -> Place | None:
        """Take a place, waiting up to ``wait_s`` for one; None: none came free."""
        try:
            async with asyncio.timeout(self.wait_s):
                await self._free.acquire()
        except TimeoutError:
            return None
        self._taken += 1
        return Place(self)

    def give_back(self) -> None:
        """Called by ``Place.release`` only."""
        self._taken -= 1
        self._free.release()
