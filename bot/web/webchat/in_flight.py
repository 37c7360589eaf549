"""The caps of one serve process: web chat answers worked on at once, and update requests
held open (each keeps a socket, and a process out of open files accepts nobody).

A request takes a place before its message is stored and gives it back once the answer is
stored (or the request ends without answering). One that finds every place taken waits a
little, then is refused (503 with Retry-After), so a flood meets a short line, never an
unbounded queue; what it refused was not stored, and the page sends it again.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import resource
from collections import Counter, deque
from typing import Any

log = logging.getLogger(__name__)
_MAX_FILES = 65_536  # the soft limit asked for when the hard one is unlimited
# A client the gate refused within this many seconds waits behind one it has not refused.
REFUSED_MEMORY_S = 30.0
_REFUSED_KEPT = 10_000  # clients remembered at most (the oldest refusals are forgotten first)


class Place:
    """A place taken at the gate by ``client``; given back once, by ``release``. ``handed``
    marks one that the answer's task gives back when it ends, not the request."""

    def __init__(self, gate: AnswerGate, client: str) -> None:
        self._gate = gate
        self._held = True
        self.client = client
        self.handed = False

    def release(self) -> None:
        if self._held:
            self._held = False
            self._gate.give_back(self.client)


class AnswerGate:
    """``places`` answers at once, shared fairly between clients (their networks): a place that
    comes free goes to the waiting client holding the fewest places now, then to one the gate
    has not refused in the last ``REFUSED_MEMORY_S`` (a client sending more than its share is
    refused, a visitor asking at a reading pace is not) or whose request is one it refused
    before, sent again (the page resends a message with its id, its ``ticket``), then to the
    earliest to ask, a request sent again counting from its first try. A flood from one network
    takes the places nobody else wants; one from many networks, each refused in turn, waits
    behind a new visitor, who gets the next free place."""

    def __init__(self, places: int, wait_s: float) -> None:
        self.places = places
        self.wait_s = wait_s
        self._taken = 0
        self._held: Counter[str] = Counter()
        # per client, oldest first: (order of the first try, sent again?, the future granted)
        self._waiting: dict[str, deque[tuple[int, bool, asyncio.Future[Place]]]] = {}
        self._order = itertools.count()
        self._refused: dict[str, float] = {}  # client -> when the gate last refused it
        self._tickets: dict[str, int] = {}  # a refused request's ticket -> its first try's order

    @property
    def taken(self) -> int:
        """Places in use now."""
        return self._taken

    @property
    def waiting(self) -> int:
        """Requests waiting for a place now."""
        return sum(1 for q in self._waiting.values() for _, _, w in q if not w.done())

    async def enter(self, client: str = "", ticket: str = "") -> Place | None:
        """Take a place for ``client``, waiting up to ``wait_s`` for one; None: none came free.
        ``ticket``: what the request is (a message id), so that sent again it keeps its turn."""
        self._hand_over()  # drops those that gave up, so a free place is not left waiting
        if self._taken < self.places and not self._waiting:
            self._tickets.pop(ticket, None)
            return self._grant(client)
        first = self._tickets.get(ticket) if ticket else None
        order = first if first is not None else next(self._order)
        waiting: asyncio.Future[Place] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(client, deque()).append((order, first is not None, waiting))
        try:
            async with asyncio.timeout(self.wait_s):
                place = await waiting
        except TimeoutError:
            if waiting.done() and not waiting.cancelled():
                place = waiting.result()  # granted as the time ran out: it is ours
            else:
                _remember(self._refused, client, asyncio.get_running_loop().time())
                if ticket:
                    _remember(self._tickets, ticket, order)
                return None
        self._tickets.pop(ticket, None)
        return place

    def refused_before(self, ticket: str) -> bool:
        """Whether a request with this ticket was refused here and not granted since: the
        page's resend of a question turned away for want of a place."""
        return bool(ticket) and ticket in self._tickets

    def _turn(self, client: str) -> tuple[int, bool, int]:
        order, again, _ = self._waiting[client][0]
        return self._held[client], not again and self._refused_lately(client), order

    def _refused_lately(self, client: str) -> bool:
        at = self._refused.get(client)
        return at is not None and asyncio.get_running_loop().time() - at < REFUSED_MEMORY_S

    def give_back(self, client: str) -> None:
        """Called by ``Place.release`` only."""
        self._taken -= 1
        self._held[client] -= 1
        if self._held[client] <= 0:
            del self._held[client]
        self._hand_over()

    def _grant(self, client: str) -> Place:
        self._taken += 1
        self._held[client] += 1
        return Place(self, client)

    def _hand_over(self) -> None:
        if self._taken >= self.places:
            return
        for client in list(self._waiting):  # those that gave up, so a client's turn is its own
            queue = self._waiting[client]
            while queue and queue[0][2].done():
                queue.popleft()
            if not queue:
                del self._waiting[client]
        while self._taken < self.places and self._waiting:
            client = min(self._waiting, key=self._turn)
            queue = self._waiting[client]
            _, _, waiting = queue.popleft()
            if not queue:
                del self._waiting[client]
            if not waiting.done():  # one that gave up meanwhile is passed over
                waiting.set_result(self._grant(client))


def _remember(memory: dict[str, Any], key: str, value: Any) -> None:
    """``memory[key] = value``, newest last, the oldest forgotten past ``_REFUSED_KEPT``."""
    memory.pop(key, None)
    memory[key] = value
    while len(memory) > _REFUSED_KEPT:
        del memory[next(iter(memory))]


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (systemd's default soft
    limit is 1,024, its hard one far higher); the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = _MAX_FILES if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError) as exc:
            log.warning("open-file limit stays at %d: %s", soft, exc)
    return soft


class HeldSlot:
    """An update request held open, counted until it is answered (a context manager)."""

    def __init__(self, polls: HeldPolls, address: str) -> None:
        self._polls = polls
        self._address = address

    def __enter__(self) -> HeldSlot:
        return self

    def __exit__(self, *_: object) -> None:
        self._polls.give_back(self._address)


class HeldPolls:
    """The update requests a serve process holds open, per client address and in all. Each
    held request keeps a socket: past ``max_held`` (half the open-file limit by default) the
    process would stop accepting anyone, so a request beyond it is answered at once with 503,
    and one beyond its address's share with 429; the first refusal of a run is logged, not
    each one."""

    def __init__(self, max_held: int) -> None:
        self.max_held = max_held
        self.held = 0
        self._by_address: dict[str, int] = {}
        self._warned = False

    def take(self, address: str, per_address: int) -> HeldSlot | int:
        """A slot to hold the request in, or the status refusing it (429 or 503)."""
        if self._by_address.get(address, 0) >= per_address:
            return 429
        if self.held >= self.max_held:
            if not self._warned:
                log.warning(
                    "web chat: %d update requests held, the most this process holds; "
                    "more are refused with 503 until some are answered",
                    self.held,
                )
                self._warned = True
            return 503
        self.held += 1
        self._by_address[address] = self._by_address.get(address, 0) + 1
        return HeldSlot(self, address)

    def give_back(self, address: str) -> None:
        self.held -= 1
        left = self._by_address.get(address, 1) - 1
        if left:
            self._by_address[address] = left
        else:
            self._by_address.pop(address, None)
        if self.held < self.max_held * 0.9:
            self._warned = False
