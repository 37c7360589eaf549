"""A `tuvan worker` process killed mid-answer: the question is answered exactly once afterwards.

The worker runs as a real process against the test database; its LLM (a stub on 127.0.0.1, the
one stand-in allowed) takes long enough that the process is killed while it holds the claim.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.worker.loop import Worker
from tests.bot.worker._support import ask
from tests.fakes.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("demo_kb")

# Not in the FAQ: tier 2 answers it, with the (slow) LLM.
QUESTION = "Đăng ký ở ký túc xá cần làm những bước nào?"


async def status_of(sm: async_sessionmaker[AsyncSession], message_id: int) -> tuple[str, int]:
    async with sm() as session:
        row = (
            await session.execute(
                text("SELECT status::text, attempts FROM messages WHERE id = :id"),
                {"id": message_id},
            )
        ).one()
    return str(row[0]), int(row[1])


async def test_a_worker_killed_mid_answer_leaves_the_question_to_be_answered_once(
    engine: AsyncEngine,
    parts: AnswererParts,
    stub: OpenAIStub,
    tmp_path: Path,
) -> None:
    sm = async_sessionmaker(engine, expire_on_commit=False)
    user = f"test-crash-{uuid.uuid4().hex[:8]}"
    [message_id] = await ask(sm, user, QUESTION)
    stub.script_chat("Bạn đăng ký trực tuyến [1].", delay_s=8)  # outlasts the kill
    env = {
        **os.environ,
        "TUVAN_DATABASE_URL": engine.url.render_as_string(hide_password=False),
        "TUVAN_DATA_DIR": str(tmp_path),
        "TUVAN_LLM__BASE_URL": stub.base_url,
        "TUVAN_LLM__API_KEY": "sk-test",
        "TUVAN_WORKER__LEASE_S": "3",
        "TUVAN_WORKER__POLL_S": "0.2",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "worker",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        for _ in range(1800):  # the worker loads its model (>70 s on a loaded machine), claims
            if stub.requests_to("/v1/chat/completions"):
                break
            await asyncio.sleep(0.1)
        else:
            process.kill()
            _, err = await process.communicate()
            raise AssertionError(f"the worker process never reached the LLM: {err[-3000:]!r}")
        assert await status_of(sm, message_id) == ("answering", 1)
        process.send_signal(signal.SIGKILL)
        _, err = await process.communicate()
        # A worker says what its start is doing, so a slow model load is never a silent minute.
        assert "s] loading the models (embeddings" in err.decode(), err[-3000:]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    # Still claimed by the dead worker until its lease runs out: nobody else may take it.
    survivor = Worker(parts.settings, sm, Answerer(parts, sm), {}, http=None)  # type: ignore[arg-type]
    await survivor.drain()
    assert await status_of(sm, message_id) == ("answering", 1)
    await asyncio.sleep(3.2)
    await survivor.drain()
    assert await status_of(sm, message_id) == ("answered", 2)
    async with sm() as session:
        replies = await session.scalar(
            text("SELECT count(*) FROM messages WHERE reply_to_id = :id"), {"id": message_id}
        )
    assert replies == 1
    async with sm.begin() as session:
        await session.execute(text("DELETE FROM contacts WHERE external_id = :u"), {"u": user})
