"""The worker's hold on its claims, on a real PostgreSQL with real commits: a poison message
is given up after ``max_attempts`` claims and its conversation goes on; an LLM slower than the
lease is called once and answered once (the lease is renewed)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.queue import claim_next_inbound
from bot.core.metrics import METRICS
from bot.llm.client import LlmClient
from bot.worker.loop import Worker
from tests.bot.worker._support import ask
from tests.fakes.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("demo_kb")

FAQ_QUESTION = "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"
# Not in the FAQ: tier 2 answers it, with the LLM.
DOC_QUESTION = "Đăng ký ở ký túc xá cần làm những bước nào?"


@pytest.fixture
async def db(engine: AsyncEngine) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    sm = async_sessionmaker(engine, expire_on_commit=False)
    yield sm
    async with sm.begin() as session:
        await session.execute(text("DELETE FROM contacts WHERE external_id LIKE 'test-clm-%'"))


def worker_for(
    parts: AnswererParts, sm: async_sessionmaker[AsyncSession], **changes: object
) -> Worker:
    settings = parts.settings.model_copy(
        update={"worker": parts.settings.worker.model_copy(update=changes)}
    )
    parts = replace(parts, settings=settings)
    return Worker(settings, sm, Answerer(parts, sm), {}, http=None)  # type: ignore[arg-type]


async def row(sm: async_sessionmaker[AsyncSession], message_id: int) -> tuple[str, int, int]:
    """Status, attempts, and how many replies it has."""
    async with sm() as session:
        found = (
            await session.execute(
                text(
                    "SELECT status::text, attempts, "
                    "(SELECT count(*) FROM messages r WHERE r.reply_to_id = m.id) "
                    "FROM messages m WHERE id = :id"
                ),
                {"id": message_id},
            )
        ).one()
    return str(found[0]), int(found[1]), int(found[2])


def failed_count(reason: str) -> float:
    pattern = (
        r'^tuvan_messages_failed_total\{channel="web",direction="in",'
        rf'reason="{reason}"\}} (\S+)$'
    )
    match = re.search(pattern, METRICS.render(), re.MULTILINE)
    return float(match.group(1)) if match else 0.0


async def test_a_message_killing_its_worker_fails_after_max_attempts_and_the_next_is_answered(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = f"test-clm-{uuid.uuid4().hex[:8]}"
    poison, following = await ask(db, user, "Câu hỏi làm sập worker", FAQ_QUESTION)
    worker = worker_for(parts, db, max_attempts=3)
    for _ in range(3):  # a worker claims it, then dies: its lease runs out
        async with db.begin() as session:
            claimed = await claim_next_inbound(session, 60.0, max_attempts=3)
            assert claimed is not None
            assert claimed.id == poison
            await session.execute(
                text("UPDATE messages SET lease_until = now() - interval '1 s' WHERE id = :id"),
                {"id": poison},
            )
    before = failed_count("abandoned")
    await worker.drain()  # the sweep runs at the worker's first step
    assert await row(db, poison) == ("failed", 3, 0)
    assert await row(db, following) == ("answered", 1, 1)
    assert failed_count("abandoned") == before + 1


@pytest.fixture
async def slow_llm_worker(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession], stub: OpenAIStub
) -> AsyncIterator[Worker]:
    llm_settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
    )
    settings = parts.settings.model_copy(
        update={
            "llm": llm_settings,
            "worker": parts.settings.worker.model_copy(update={"lease_s": 0.6}),
        }
    )
    client = LlmClient(llm_settings, max_retries=0)
    try:
        llm_parts = replace(parts, settings=settings, llm=client)
        yield Worker(settings, db, Answerer(llm_parts, db), {}, http=None)  # type: ignore[arg-type]
    finally:
        await client.aclose()


async def test_an_llm_slower_than_the_lease_is_called_once_and_answered_once(
    slow_llm_worker: Worker,
    parts: AnswererParts,
    db: async_sessionmaker[AsyncSession],
    stub: OpenAIStub,
) -> None:
    user = f"test-clm-{uuid.uuid4().hex[:8]}"
    [question] = await ask(db, user, DOC_QUESTION)
    stub.script_chat("Bạn đăng ký ký túc xá trực tuyến [1].", delay_s=2.0)  # > 3 leases
    answering = asyncio.create_task(slow_llm_worker.drain())
    for _ in range(600):  # the slow worker claims it first (else the other one answers it)
        if (await row(db, question))[0] == "answering" or answering.done():
            break
        await asyncio.sleep(0.05)
    other = worker_for(parts, db, lease_s=0.6)
    for _ in range(40):  # another worker keeps looking while the LLM thinks
        if answering.done():
            break
        await other.drain()
        await asyncio.sleep(0.1)
    await answering
    assert len(stub.requests_to("/v1/chat/completions")) == 1
    assert await row(db, question) == ("answered", 1, 1)
