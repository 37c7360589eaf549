"""The FAQ pages over real HTTP against the demo knowledge base (in the test's transaction):
an edit answers the very next question verbatim, drafts do not answer, every change is audited,
search ignores accents, user text is escaped."""

from __future__ import annotations

import json
import re

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import AuditEntry, FaqEntry, FaqOrigin, FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.demo import demo_kb_dir
from tests.admin._support import AdminBrowser

FAQ = {
    row["id"]: row
    for row in map(json.loads, (demo_kb_dir() / "faq.jsonl").read_text("utf-8").splitlines())
}
SCRIPT = "<script>alert('x')</script>"
PARKING_Q = "Trường có bãi gửi xe máy miễn phí cho sinh viên không?"
PARKING_A = "Có. Bãi xe khu B miễn phí cho sinh viên có thẻ, mở 6:00–22:00 (cập nhật 2026)."


def entry_form(**fields: str) -> dict[str, str]:
    base = {"question": PARKING_Q, "answer": PARKING_A, "language": "vi", "status": "published"}
    return {**base, **fields}


async def faq_id(sm: async_sessionmaker[AsyncSession], external_id: str) -> int:
    async with sm() as session:
        found = await session.scalar(select(FaqEntry.id).where(FaqEntry.external_id == external_id))
    assert found is not None
    return found


async def create(editor: AdminBrowser, **fields: str) -> int:
    response = await editor.post("/admin/faq/new", entry_form(**fields))
    assert response.status == 303, await response.text()
    found = re.fullmatch(r"/admin/faq/(\d+)\?msg=created", response.headers["Location"])
    assert found
    return int(found.group(1))


async def test_an_edit_answers_the_very_next_question_verbatim(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await faq_id(sessionmaker, "shut-faq01")
    before = await editor.ask(FAQ["shut-faq01"]["question"])
    assert before["said"] == FAQ["shut-faq01"]["answer"]
    new_answer = "Mã trường là SHT (viết hoa). Ghi đúng mã này trên phiếu đăng ký nguyện vọng."
    response = await editor.post(
        f"/admin/faq/{entry}",
        entry_form(question=FAQ["shut-faq01"]["question"], answer=new_answer),
    )
    assert response.status == 303
    assert response.headers["Location"] == f"/admin/faq/{entry}?msg=saved"
    after = await editor.ask(FAQ["shut-faq01"]["question"])
    assert after["tier"] == "faq"
    assert after["said"] == new_answer
    # a new question is embedded at once: asking it reaches the entry
    assert (await editor.ask(PARKING_Q)).get("faq_id") != entry
    await editor.post(f"/admin/faq/{entry}", entry_form())
    moved = await editor.ask(PARKING_Q)
    assert moved["tier"] == "faq"
    assert moved["faq_id"] == entry
    assert moved["said"] == PARKING_A


async def test_a_new_entry_answers_once_published_and_not_as_a_draft(
    editor: AdminBrowser,
) -> None:
    entry = await create(editor, status="draft")
    assert (await editor.ask(PARKING_Q)).get("faq_id") != entry
    assert (await editor.post(f"/admin/faq/{entry}/publish")).status == 303
    published = await editor.ask(PARKING_Q)
    assert (published["tier"], published["faq_id"], published["said"]) == (
        "faq",
        entry,
        PARKING_A,
    )
    assert (await editor.post(f"/admin/faq/{entry}/unpublish")).status == 303
    assert (await editor.ask(PARKING_Q)).get("faq_id") != entry


async def test_every_change_is_in_the_audit_log_and_the_history_page(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await create(editor)
    await editor.post(f"/admin/faq/{entry}", entry_form(answer=PARKING_A + " Có camera."))
    await editor.post(f"/admin/faq/{entry}/unpublish")
    await editor.post(f"/admin/faq/{entry}/variants", {"variant": "gửi xe có mất tiền không"})
    async with sessionmaker() as session:
        rows = (
            await session.scalars(
                select(AuditEntry)
                .where(AuditEntry.entity == "faq", AuditEntry.entity_id == entry)
                .order_by(AuditEntry.id)
            )
        ).all()
    assert [r.action for r in rows] == ["create", "update", "unpublish", "add_variant"]
    editor_email = rows[0].actor
    assert editor_email.startswith("editor")
    assert all(r.actor == editor_email for r in rows)
    assert rows[0].before is None
    assert rows[0].after is not None
    assert rows[0].after["question"] == PARKING_Q
    assert rows[1].before is not None
    assert rows[1].after is not None
    assert (rows[1].before["answer"], rows[1].after["answer"]) == (
        PARKING_A,
        PARKING_A + " Có camera.",
    )
    assert (rows[2].before["status"], rows[2].after["status"]) == ("published", "draft")  # type: ignore[index]
    history = await editor.page(f"/admin/faq/{entry}/history")
    assert history.count('data-testid="history-item"') == 4
    assert editor_email in history
    assert "<ins>Có camera.</ins>" in history  # the words that changed, not the whole answer
    assert 'data-testid="history-field-status"' in history


async def test_saving_an_unchanged_entry_writes_no_audit_entry(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await create(editor)
    await editor.post(f"/admin/faq/{entry}", entry_form())
    async with sessionmaker() as session:
        count = await session.scalar(
            select(func.count()).where(AuditEntry.entity == "faq", AuditEntry.entity_id == entry)
        )
    assert count == 1


async def test_phrasings_are_added_and_removed_and_answer_at_once(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await create(editor)
    phrasing = "Để xe máy trong khuôn viên trường có được không?"
    assert (await editor.post(f"/admin/faq/{entry}/variants", {"variant": phrasing})).status == 303
    duplicate = await editor.post(f"/admin/faq/{entry}/variants", {"variant": phrasing})
    assert duplicate.status == 400
    async with sessionmaker() as session:
        variants = (
            await session.scalars(select(FaqVariant).where(FaqVariant.faq_id == entry))
        ).all()
    staff = [v for v in variants if v.origin == VariantOrigin.staff]
    assert [v.text for v in variants] == [phrasing]  # no copy without diacritics is stored
    page = await editor.page(f"/admin/faq/{entry}")
    assert f'data-testid="variant-remove-{staff[0].id}"' in page
    answered = await editor.ask("để xe máy trong khuôn viên trường được không")
    assert answered["faq_id"] == entry
    # the phrasing typed without marks is the same phrasing: answered at once, verbatim
    unaccented = await editor.ask("de xe may trong khuon vien truong co duoc khong")
    assert unaccented["faq_id"] == entry
    assert (await editor.post(f"/admin/faq/{entry}/variants/{staff[0].id}/delete")).status == 303
    async with sessionmaker() as session:
        left = (
            await session.scalars(select(FaqVariant.text).where(FaqVariant.faq_id == entry))
        ).all()
    assert phrasing not in left
    assert "de xe may trong khuon vien truong co duoc khong?" not in left


async def test_delete_removes_the_entry_and_its_answer(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await create(editor)
    response = await editor.post(f"/admin/faq/{entry}/delete")
    assert response.headers["Location"] == "/admin/faq?msg=deleted"
    assert (await editor.get(f"/admin/faq/{entry}")).status == 404
    assert (await editor.ask(PARKING_Q)).get("faq_id") != entry
    history = await editor.page(f"/admin/faq/{entry}/history")  # the record outlives the entry
    assert history.count('data-testid="history-item"') == 2


async def test_invalid_form_is_shown_again_with_the_errors(editor: AdminBrowser) -> None:
    response = await editor.post(
        "/admin/faq/new", entry_form(question="  ", source_url="javascript:alert(1)")
    )
    assert response.status == 400
    page = await response.text()
    assert "Cần có câu hỏi." in page
    assert "http://" in page  # the link rule
    assert PARKING_A in page  # what was typed is kept


async def test_search_ignores_accents_and_case_on_both_sides(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await create(editor)
    for query in ("bai gui xe", "BÃI GỬI XE", "Bãi Gửi xe", "bai   gui  xe"):
        page = await editor.page(f"/admin/faq?q={query}")
        assert PARKING_Q in page, query
        assert FAQ["shut-faq01"]["question"] not in page
    # the answer and phrasings are searched too; LIKE's wildcards are plain characters
    assert PARKING_Q in await editor.page("/admin/faq?q=khu b mien phi")
    assert "faq-empty" in await editor.page("/admin/faq?q=%25_%25")


async def test_filters_and_pages(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await create(editor, status="draft", source="bai-xe.md")
    async with sessionmaker.begin() as session:
        session.add_all(
            FaqEntry(
                question=f"Câu hỏi phân trang số {n:02d}?",
                answer="Trả lời.",
                status=FaqStatus.draft,
                origin=FaqOrigin.generated,
                needs_review=n % 2 == 0,
                language="en" if n == 7 else "vi",
            )
            for n in range(30)
        )
    drafts = await editor.page("/admin/faq?status=draft&source=bai-xe.md")
    assert f'data-testid="faq-row-{entry}"' in drafts
    assert drafts.count('data-testid="faq-row-') == 1
    first = await editor.page("/admin/faq?origin=generated")
    assert first.count('data-testid="faq-row-') == 25
    assert "Trang 1/2 · 30 mục" in first
    second = await editor.page("/admin/faq?origin=generated&page=2")
    assert second.count('data-testid="faq-row-') == 5
    review = await editor.page("/admin/faq?origin=generated&review=1")
    assert review.count('data-testid="faq-row-') == 15
    english = await editor.page("/admin/faq?origin=generated&language=en")
    assert "phân trang số 07" in english
    assert english.count('data-testid="faq-row-') == 1
    # a hand-edited URL with nonsense still shows a list
    assert "faq-table" in await editor.page("/admin/faq?status=nope&page=x&origin=%3Cb%3E")


async def test_user_text_is_escaped_everywhere(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await create(
        editor, question=f"Học phí {SCRIPT}?", answer=f"Trả lời {SCRIPT}", source=SCRIPT
    )
    await editor.post(f"/admin/faq/{entry}/variants", {"variant": f"hỏi {SCRIPT}"})
    await editor.post(
        f"/admin/faq/{entry}", entry_form(question=f"Học phí {SCRIPT}?", answer=f"Đáp {SCRIPT}")
    )
    for path in (
        f"/admin/faq/{entry}",
        f"/admin/faq/{entry}/history",
        "/admin/faq",
        f"/admin/faq?q={SCRIPT}",
    ):
        page = await editor.page(path)
        assert "<script>alert" not in page, path
        assert "&lt;script&gt;alert(" in page, path


async def test_a_viewer_sees_the_entry_read_only(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    entry = await faq_id(sessionmaker, "shut-faq02")
    page = await viewer.page(f"/admin/faq/{entry}")
    assert FAQ["shut-faq02"]["answer"] in page
    assert 'data-testid="faq-save"' not in page
    assert 'data-testid="faq-publish"' not in page
    assert 'data-testid="faq-unpublish"' not in page
    assert "disabled" in page
    assert 'data-testid="faq-new"' not in await viewer.page("/admin/faq")
    assert (await viewer.get("/admin/faq/new")).status == 403


async def test_new_entry_can_be_prefilled_with_a_question(editor: AdminBrowser) -> None:
    page = await editor.page("/admin/faq/new?question=Học%20phí%20<b>2027</b>?")
    assert "Học phí &lt;b&gt;2027&lt;/b&gt;?</textarea>" in page


async def test_the_editor_shows_the_self_check_in_plain_vietnamese(editor: AdminBrowser) -> None:
    entry = await create(editor)
    page = await editor.page(f"/admin/faq/{entry}")
    assert 'data-testid="faq-check-ok"' in page
    # a phrasing about tuition on the parking entry: its answer never speaks of tuition
    refused = "Học phí gửi xe máy một tháng là bao nhiêu?"
    assert (await editor.post(f"/admin/faq/{entry}/variants", {"variant": refused})).status == 303
    page = await editor.page(f"/admin/faq/{entry}")
    assert 'data-testid="faq-check-guard"' in page
    assert "Câu hỏi hỏi về học phí" in page
    assert "mục này không nói về học phí" in page
