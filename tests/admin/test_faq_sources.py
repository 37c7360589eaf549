"""An FAQ answer's source on the staff pages (the conversation, "Cần xem lại", Try it): the
document its entry names, by title and linked to its address, never the file's name the entry's
``source`` holds ("tong-quan.md"). The answer is the real answerer's on the demo knowledge base,
stored as the worker stores it."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from urllib.parse import quote

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.conversations.store import citations_json
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.faq_files import read_faq_file
from tests.admin._answers import exchange
from tests.admin._support import AdminBrowser

pytestmark = pytest.mark.usefixtures("demo_kb")

QUESTION = "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"
ENTRY = next(d for d in read_faq_file(demo_kb_dir() / "faq.jsonl") if d.question == QUESTION)
TITLE = "Tổng quan về Trường Đại học Công nghệ Sông Hồng"
URL = "https://tuyensinh.shut.example.vn/tong-quan"


def titled_link(page: str) -> bool:
    """The page links the document's address with its title as the link's text."""
    opening = f'<a href="{URL}"'
    return any(
        part.split(">", 1)[1].startswith(html.escape(TITLE)) for part in page.split(opening)[1:]
    )


async def stored_faq_answer(
    sm: async_sessionmaker[AsyncSession], answerer: Answerer
) -> tuple[int, int]:
    answer = await answerer.answer(QUESTION)
    assert answer.tier == "faq"
    details = {"faq_id": answer.faq_id, "scores": answer.scores, "reason": answer.reason}
    return await exchange(
        sm,
        QUESTION,
        "faq",
        datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
        details=details,
        citations=citations_json(answer.citations),
        answer=answer.answer,
    )


async def test_the_conversation_shows_an_faq_answers_source_as_the_documents_titled_link(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], answerer: Answerer
) -> None:
    assert ENTRY.source == "tong-quan.md"
    conversation, _ = await stored_faq_answer(sessionmaker, answerer)
    page = await viewer.page(f"/admin/conversations/{conversation}")
    assert titled_link(page)
    assert "tong-quan.md" not in page


async def test_an_opened_faq_answer_names_its_document_and_offers_to_edit_it(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], answerer: Answerer
) -> None:
    _, answer_id = await stored_faq_answer(sessionmaker, answerer)
    page = await editor.page(f"/admin/recheck/{answer_id}")
    sources = page.split('data-testid="recheck-sources"', 1)[1].split("</ol>", 1)[0]
    assert titled_link(sources)
    assert "tong-quan.md" not in page
    assert 'data-testid="recheck-edit-document-' in page  # the document is known by its path


async def test_try_it_shows_an_faq_answers_source_by_title_and_address(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page(f"/admin/try?q={quote(QUESTION)}")
    assert 'data-tier="faq"' in page
    answer = page.split('data-testid="try-answer"', 1)[1].split("</div>", 1)[0]
    assert html.escape(TITLE) in answer
    assert URL in answer
    assert "tong-quan.md" not in page
