"""What one client may hold of a serve process, over real HTTP on 127.0.0.1 and the real
database: the page's reads under buckets of their own, the buckets of a client's network (a
client rotating its IPv6 address inside its /64), update requests held per address and per
process, and the open-file limit raised at start."""

from __future__ import annotations

import asyncio
import logging
import resource
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.client_address import client_network
from bot.core.settings import Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import RateBucket
from bot.runtime import Runtime
from bot.web.webchat.in_flight import AnswerGate, HeldPolls, HeldSlot, raise_open_file_limit
from tests.bot.web._support import ServeWebChat, runtime_with
from tests.waiting import until

Client = TestClient[web.Request, web.Application]


def _runtime(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
    **limits: Any,
) -> Runtime:
    roomy = {"chat_ip_burst": 1000, "chat_visitor_burst": 1000, "chat_network_burst": 1000}
    return runtime_with(
        settings,
        engine,
        sessionmaker,
        parts,
        answerer,
        web_changes={"updates_wait_s": 30.0},
        admin_changes={"trust_proxy": True},
        **{**roomy, **limits},
    )


@pytest.fixture
def make(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> Any:
    return lambda **limits: _runtime(settings, engine, sessionmaker, parts, answerer, **limits)


def _from(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, "X-Visitor-Id": uuid.uuid4().hex}


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("203.0.113.77", "203.0.113.0/24"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("[2001:db8:1:2::9]", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.4", "198.51.100.0/24"),
        ("unknown", None),
    ],
)
def test_an_address_counts_in_its_network(address: str, network: str | None) -> None:
    assert client_network(address, v4_prefix=24, v6_prefix=64) == network


async def test_a_client_looping_on_history_gets_429_and_its_reads_write_nothing(
    make: Any, serve_webchat: ServeWebChat
) -> None:
    client, _ = await serve_webchat(make(reads_ip_burst=3, reads_ip_per_minute=1.0))
    headers = _from("198.51.100.10")
    statuses = [(await client.get("/api/chat/history", headers=headers)).status for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    other = await client.get("/api/chat/history", headers=_from("198.51.100.200"))
    assert other.status == 200  # another address of the network, within the network's bucket
    # the questions' allowance is untouched by the reads
    body = {"visitor_id": "v-after-reads", "message_id": str(uuid.uuid4()), "text": "xin chào"}
    asked = await client.post("/api/chat", json=body, headers={"X-Forwarded-For": "198.51.100.10"})
    assert asked.status == 200
    await asked.text()


async def test_addresses_rotated_inside_one_ipv6_64_share_its_bucket(
    make: Any, serve_webchat: ServeWebChat
) -> None:
    client, _ = await serve_webchat(make(chat_network_burst=4, chat_network_per_minute=1.0))
    statuses = []
    for n in range(8):  # a new address and a new visitor every time
        body = {"visitor_id": f"rot-{n}", "message_id": str(uuid.uuid4()), "text": "xin chào"}
        forwarded = {"X-Forwarded-For": f"2001:db8:77:1::{n + 1:x}"}
        response = await client.post("/api/chat", json=body, headers=forwarded)
        await response.text()  # the answer is stored before the next question
        statuses.append(response.status)
    assert statuses == [200] * 4 + [429] * 4
    body = {"visitor_id": "elsewhere", "message_id": str(uuid.uuid4()), "text": "xin chào"}
    elsewhere = {"X-Forwarded-For": "2001:db8:78:1::1"}  # another /64
    response = await client.post("/api/chat", json=body, headers=elsewhere)
    assert response.status == 200
    await response.text()


@pytest.fixture
async def committed(engine: AsyncEngine) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """Real transactions (held requests read the database at the same time); the buckets the
    test filled are deleted after it."""
    yield make_sessionmaker(engine)
    async with make_sessionmaker(engine).begin() as session:
        await session.execute(delete(RateBucket).where(RateBucket.key.like("reads-%192.0.2.%")))


async def test_update_requests_are_held_up_to_each_address_s_share_and_the_process_s_cap(
    settings: Settings,
    engine: AsyncEngine,
    committed: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    serve_webchat: ServeWebChat,
    caplog: pytest.LogCaptureFixture,
) -> None:
    answerer = Answerer(parts, committed)
    runtime = _runtime(
        settings, engine, committed, parts, answerer, updates_held_per_address=2, updates_held_max=3
    )
    client, chat = await serve_webchat(runtime)
    # Until its LISTEN connection is up, a process holds requests only briefly, and coming up it
    # wakes every request held so far (whatever was stored while nothing listened): the counts
    # below are those of a process that listens.
    await until(lambda: chat.watch.listening)

    async def poll(address: str) -> Any:
        return await client.get("/api/chat/updates?since=0", headers=_from(address))

    async def held_now(count: int) -> None:
        await until(lambda: chat.held.held == count or any(t.done() for t in held))
        answered = [(await t).status for t in held if t.done()]
        assert answered == [], f"answered at once, not held: {answered}"

    held = [asyncio.create_task(poll("192.0.2.1")) for _ in range(2)]
    await held_now(2)
    third = await poll("192.0.2.1")  # its address holds its share: answered at once
    assert third.status == 429
    held.append(asyncio.create_task(poll("192.0.2.2")))
    await held_now(3)
    with caplog.at_level(logging.WARNING, logger="bot.web.webchat.in_flight"):
        refused = [await poll(f"192.0.2.{n}") for n in range(10, 14)]
    assert {r.status for r in refused} == {503}
    assert all(int(r.headers["Retry-After"]) >= 1 for r in refused)
    assert len([r for r in caplog.records if "held" in r.getMessage()]) == 1  # logged once
    await chat.stop(client.app)  # the held requests are answered
    assert [(await t).status for t in held] == [200, 200, 200]
    assert chat.held.held == 0


def test_held_slots_are_given_back_once_answered() -> None:
    polls = HeldPolls(2)
    first = polls.take("a", 5)
    assert isinstance(first, HeldSlot)
    with first:
        assert polls.take("a", 1) == 429
    assert polls.held == 0
    assert isinstance(polls.take("a", 1), HeldSlot)


def test_the_open_file_limit_is_raised_to_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(soft, 256)
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        raised = raise_open_file_limit()
        now, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert raised == now
        assert now > low or hard == low
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_a_freed_place_goes_to_the_client_holding_fewest_not_to_the_flood() -> None:
    gate = AnswerGate(places=2, wait_s=5.0)
    flood = [await gate.enter("10.0.0.0/24") for _ in range(2)]
    assert all(p is not None for p in flood)
    queued = [asyncio.create_task(gate.enter("10.0.0.0/24")) for _ in range(5)]
    await asyncio.sleep(0)
    student = asyncio.create_task(gate.enter("203.0.113.0/24"))  # asked last
    await asyncio.sleep(0)
    assert gate.waiting == 6
    flood[0].release()  # type: ignore[union-attr]
    place = await asyncio.wait_for(student, 1)  # the next free place is the student's
    assert place is not None
    assert place.client == "203.0.113.0/24"
    assert not any(t.done() for t in queued)
    place.release()  # then the flood's queue goes on, oldest first
    assert (await asyncio.wait_for(queued[0], 1)) is not None
    for task in queued[1:]:
        task.cancel()


async def test_a_client_refused_lately_waits_behind_one_that_was_not() -> None:
    """A flood from many networks: each holds nothing, and each was refused already; a new
    visitor asking after them gets the next free place."""
    gate = AnswerGate(places=1, wait_s=0.05)
    held = await gate.enter("10.0.1.0/24")
    assert held is not None
    assert await gate.enter("10.0.2.0/24") is None  # refused: waited past its time
    gate.wait_s = 5.0
    flood = asyncio.create_task(gate.enter("10.0.2.0/24"))  # asks first, holding nothing
    await asyncio.sleep(0)
    student = asyncio.create_task(gate.enter("203.0.113.0/24"))
    await asyncio.sleep(0)
    held.release()
    place = await asyncio.wait_for(student, 1)
    assert place is not None
    assert place.client == "203.0.113.0/24"
    assert not flood.done()
    place.release()
    assert (await asyncio.wait_for(flood, 1)) is not None


async def test_a_request_sent_again_keeps_its_turn_though_its_client_was_refused() -> None:
    gate = AnswerGate(places=1, wait_s=0.05)
    held = await gate.enter("10.0.1.0/24")
    assert held is not None
    assert await gate.enter("203.0.113.0/24", ticket="m1") is None  # the student, unlucky
    gate.wait_s = 5.0
    flood = asyncio.create_task(gate.enter("10.0.2.0/24", ticket="f1"))  # fresh, asks first
    await asyncio.sleep(0)
    again = asyncio.create_task(gate.enter("203.0.113.0/24", ticket="m1"))  # the page's resend
    await asyncio.sleep(0)
    held.release()
    place = await asyncio.wait_for(again, 1)
    assert place is not None
    assert place.client == "203.0.113.0/24"
    assert not flood.done()
    place.release()
    assert (await asyncio.wait_for(flood, 1)) is not None


async def test_a_client_waiting_past_its_time_gets_none_and_leaves_no_place_taken() -> None:
    gate = AnswerGate(places=1, wait_s=0.1)
    held = await gate.enter("a")
    assert held is not None
    assert await gate.enter("b") is None
    held.release()
    assert gate.taken == 0
    assert gate.waiting == 0
    again = await gate.enter("b")  # the one that gave up does not hold the free place
    assert again is not None
    assert gate.taken == 1
