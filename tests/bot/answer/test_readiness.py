"""Tier 1 kept ready (bot.answer.readiness): the calibration for a changed FAQ is made by the
process beside its work, not by the first student's question after the change."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.readiness import keep_tier_one_ready
from retrieval.facts.book import FactsBook
from retrieval.faq import judge as judge_module
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer


@pytest.fixture
def calibrations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many judges were made (each one a calibration of the FAQ)."""
    made: list[int] = []
    real = judge_module.make_judge

    def counting(*args: object, **kwargs: object) -> judge_module.FaqJudge:
        made.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(judge_module, "make_judge", counting)
    return made


async def test_a_changed_faq_is_calibrated_before_the_next_question(
    answerer: Answerer,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    calibrations: list[int],
) -> None:
    async with sessionmaker() as session:
        await upsert_faq(
            session,
            indexer,
            FaqDraft(
                question="Trường có bãi giữ xe ô tô cho sinh viên không?",
                answer="Có, bãi xe ô tô ở cổng sau, 20.000 đồng một lượt.",
            ),
        )
        await session.commit()  # into the test's outer transaction, rolled back after it
    # The process's guard was made for another catalogue (as at start, or after staff changed
    # the majors): the judge made ahead must be the one the next question uses.
    answerer.parts.read_catalogue(FactsBook(signature="an earlier catalogue"))
    stop = asyncio.Event()
    stop.set()  # one round: the judge for the FAQ as it is now
    await keep_tier_one_ready(answerer, stop, every_s=0.01)
    assert calibrations == [1]
    result = await answerer.answer("Trường có bãi giữ xe ô tô cho sinh viên không?")
    assert (result.tier, result.answer) == (
        "faq",
        "Có, bãi xe ô tô ở cổng sau, 20.000 đồng một lượt.",
    )
    assert calibrations == [1]  # the question found it made


async def test_it_looks_again_until_stopped_and_an_unchanged_faq_costs_no_calibration(
    answerer: Answerer, calibrations: list[int]
) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(keep_tier_one_ready(answerer, stop, every_s=0.01))
    await asyncio.sleep(0.3)  # many rounds
    stop.set()
    await asyncio.wait_for(task, 5)
    assert len(calibrations) <= 1  # made once at most (none if an earlier test made it)
