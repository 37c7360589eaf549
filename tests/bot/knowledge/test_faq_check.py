"""The FAQ self-check (knowledge.faq_check): phrasings asked as a student would type them, on the
demo knowledge base plus entries made here to be confusable or refused."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer.answerer import Answerer
from bot.knowledge.faq_check import check_entries
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer


async def test_the_demo_faq_as_shipped_has_no_confusable_or_refused_phrasing(
    answerer: Answerer, session: AsyncSession, demo_kb: dict[str, int]
) -> None:
    report = await check_entries(answerer, session, list(demo_kb.values()))
    assert report.entries == len(demo_kb)
    assert report.phrasings > report.entries  # two entries carry staff phrasings
    assert report.count("other_entry") == 0
    assert report.count("guard") == 0
    # What tier 1 is not sure enough of still reaches the student as the entry's own sentences
    # (tier 2's first passage); only the rest is a problem for staff.
    assert report.quoted > 0
    assert report.quoted + len(report.problems) <= report.phrasings + report.count("near_miss")
    assert f"{report.quoted} quoted from their entry in tier 2" in report.summary


async def test_confusable_entries_and_a_refused_variant_are_reported(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, demo_kb: dict[str, int]
) -> None:
    fee = await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question="Phí gửi xe máy mỗi tháng ở ký túc xá là bao nhiêu?",
            answer="Gửi xe máy ở ký túc xá: 100.000 đồng mỗi tháng.",
        ),
    )
    twin = await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question="Phí gửi xe máy mỗi tháng ở ký túc xá bao nhiêu tiền?",
            answer="Miễn phí gửi xe cho sinh viên ở ký túc xá.",
        ),
    )
    hours = await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question="Nhà xe ký túc xá mở cửa lúc mấy giờ?",
            answer="Nhà xe mở cửa từ 5 giờ đến 23 giờ mỗi ngày.",
            # a fee asked of the entry about opening hours: the guard refuses it
            variants=["Học phí ký túc xá một tháng bao nhiêu?"],
        ),
    )
    report = await check_entries(answerer, session, [fee.id, twin.id, hours.id])
    assert report.entries == 3
    assert report.phrasings == 4
    by_phrasing = {p.phrasing: p for p in report.problems}
    refused = by_phrasing["Học phí ký túc xá một tháng bao nhiêu?"]
    assert refused.problem == "guard"
    assert "học phí" in refused.staff_detail
    assert refused.staff_detail.startswith("Câu hỏi hỏi về")
    # the two fee entries with different answers: each phrasing fits the other entry too, and
    # the report names it (tier 1 abstains, takes the other, or would without this one)
    for mine, other in ((fee, twin), (twin, fee)):
        found = by_phrasing[mine.question]
        assert found.other_id == other.id, found
        assert found.problem in {"unanswered", "confusable", "other_entry"}
        assert f"#{other.id}" in found.staff_detail
    assert "1 refused by the guard" in report.summary
