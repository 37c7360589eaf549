"""The three tiers on the demo knowledge base, in a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.question import MAX_QUESTION_CHARS, clean_question
from bot.answer.read import asking_parts
from bot.answer.replies import answer_body
from bot.core.citations import public_citation
from bot.db.models import FaqEntry, FaqStatus
from bot.knowledge.demo import demo_kb_dir
from tests.bot.answer._support import verbatim_only, with_answer_settings

FAQ = {
    json.loads(line)["id"]: json.loads(line)
    for line in (demo_kb_dir() / "faq.jsonl").read_text(encoding="utf-8").splitlines()
}


async def test_faq_question_is_answered_verbatim(answerer: Answerer) -> None:
    result = await answerer.answer("Chỉ tiêu ngành Khoa học Máy tính năm 2026 là bao nhiêu?")
    assert result.tier == "faq"
    assert result.faq_external_id == "shut-faq02"
    assert answer_body(result) == FAQ["shut-faq02"]["answer"]


async def test_an_faq_answer_cites_the_document_its_entry_names_by_title_and_address(
    answerer: Answerer,
) -> None:
    # The entry's source is "nganh-dao-tao-2026.md": the demo document of that name is cited
    # as a documents answer cites it, below the entry's answer, never by the file's name.
    result = await answerer.answer("Chỉ tiêu ngành Khoa học Máy tính năm 2026 là bao nhiêu?")
    assert result.tier == "faq"
    [cited] = result.citations
    title = "Danh sách ngành đào tạo và chỉ tiêu tuyển sinh năm 2026"
    url = "https://tuyensinh.shut.example.vn/nganh-dao-tao-2026"
    assert (cited.title, cited.url) == (title, url)
    assert cited.source.endswith("/nganh-dao-tao-2026.md")  # where staff pages find it
    assert result.answer == f"{FAQ['shut-faq02']['answer']}\n\nNguồn:\n[1] {title} — {url}"
    assert public_citation(cited) == {"n": 1, "title": title, "url": url, "page": None}


async def test_an_english_faq_answer_cites_its_document_under_an_english_heading(
    answerer: Answerer,
) -> None:
    english = next(e for e in FAQ.values() if e["language"] == "en")
    result = await answerer.answer(english["question"])
    assert result.tier == "faq"
    assert result.language == "en"
    [cited] = result.citations
    assert cited.url is not None
    assert cited.url.startswith("https://admissions.shut.example.vn/")
    assert "\n\nSources:\n[1] " in result.answer
    assert english["source"] not in result.answer


async def test_an_unaccented_abbreviated_paraphrase_gets_its_entry_s_answer(
    answerer: Answerer,
) -> None:
    # Verbatim when the scorer is sure enough for the default risk, else quoted as tier 2's
    # first passage: either way the student reads the entry's answer, not a neighbour's.
    result = await answerer.answer("chi tieu nganh khmt nam 2026 bao nhieu")
    decision = result.trace["faq"]
    best = decision.verdicts[0]
    assert best.candidate.external_id == "shut-faq02"
    assert best.probability is not None
    assert best.probability > 0.5
    assert FAQ["shut-faq02"]["answer"].split(". ")[0] in result.answer
    assert "150" not in result.answer  # Kỹ thuật Máy tính's quota


async def test_other_major_is_not_answered_with_the_look_alike_faq(answerer: Answerer) -> None:
    # The FAQ covers Khoa học Máy tính; Kỹ thuật Máy tính must come from the documents.
    result = await answerer.answer("Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?")
    assert result.tier == "documents"
    assert "150" in result.answer
    assert any(c.source.endswith("nganh-dao-tao-2026.md") for c in result.citations)
    verdicts = result.trace["faq"].verdicts
    assert any("guard" in v.reason for v in verdicts)


async def test_without_the_guard_the_scorer_still_turns_the_look_alike_down(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: object
) -> None:
    # The guard off, the KHMT entry is weighed, not ruled out: "kỹ thuật" is not in it, and the
    # scorer gives it less than the same question about its own major.
    unguarded = Answerer(with_answer_settings(parts, near_miss_guard=False), sessionmaker)
    other = await unguarded.answer("Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?")
    own = await unguarded.answer("Chỉ tiêu ngành Khoa học Máy tính năm 2026 bao nhiêu vậy?")
    assert other.faq_external_id != "shut-faq02"

    def probability(result: object, external_id: str) -> float:
        verdicts = result.trace["faq"].verdicts  # type: ignore[attr-defined]
        return next(v.probability for v in verdicts if v.candidate.external_id == external_id)

    look_alike = probability(other, "shut-faq02")
    assert look_alike < probability(own, "shut-faq02")
    assert look_alike < other.scores["faq_threshold"]


async def test_other_year_is_refused_by_the_guard(answerer: Answerer) -> None:
    result = await answerer.answer("Năm 2024 trường xét tuyển theo những phương thức nào?")
    assert result.faq_external_id != "shut-faq05"


async def test_with_no_fitted_scorer_only_a_verbatim_phrasing_gets_tier_1(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: object
) -> None:
    strict = Answerer(verbatim_only(parts), sessionmaker)
    result = await strict.answer("Học phí chương trình chuẩn năm học 2026–2027 bao nhiêu vậy?")
    assert result.tier == "documents"
    assert "32.500.000" in result.answer
    assert result.scores["faq_threshold"] > 1  # out of every probability's reach
    verbatim = await strict.answer(FAQ["shut-faq10"]["question"])
    assert (verbatim.tier, verbatim.faq_external_id) == ("faq", "shut-faq10")


async def test_t_doc_above_every_score_ends_in_the_fallback(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: object
) -> None:
    strict = Answerer(verbatim_only(parts, t_doc=0.999), sessionmaker)
    result = await strict.answer("Học phí chương trình chuẩn năm học 2026–2027 bao nhiêu vậy?")
    assert result.tier == "fallback"
    assert "32.500.000" not in result.answer
    assert parts.settings.contact.phone in result.answer


async def test_out_of_scope_question_gets_the_fallback_with_contact(answerer: Answerer) -> None:
    result = await answerer.answer("Thời tiết ở Đà Lạt cuối tuần này thế nào?")
    assert result.tier == "fallback"
    assert "028 3999 1234" in result.answer
    assert result.citations == []


async def test_documents_answer_quotes_sources_with_numbers_and_disclaimer(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("Đăng ký ở ký túc xá cần làm những bước nào?")
    assert result.tier == "documents"
    assert result.citations, result.answer
    for c in result.citations:
        assert f"[{c.n}]" in result.answer
    assert [c.n for c in result.citations] == list(range(1, len(result.citations) + 1))
    # one number per source: two chunks of the same page are one citation
    assert len({(c.source, c.page) for c in result.citations}) == len(result.citations)
    assert answerer.settings.answer.disclaimer_docs_vi in result.answer
    assert "ky-tuc-xa.md" in {Path(c.source).name for c in result.citations}


async def test_english_question_gets_english_fixed_texts(answerer: Answerer) -> None:
    result = await answerer.answer("What is the weather like in Paris today?")
    assert result.language == "en"
    assert result.tier == "fallback"
    assert "Sorry" in result.answer


async def test_answer_carries_scores_and_timings(answerer: Answerer) -> None:
    result = await answerer.answer("Học phí chương trình chất lượng cao năm 2026 là bao nhiêu?")
    data = result.to_json()
    assert data["tier"] in {"faq", "documents", "fallback"}
    assert {"embed", "faq", "total"} <= set(data["timings_ms"])
    assert data["scores"]["faq_best"] > 0


async def test_draft_faq_entries_do_not_answer(
    answerer: Answerer, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: dict[str, int]
) -> None:
    async with sessionmaker.begin() as session:
        entry = await session.scalar(select(FaqEntry).where(FaqEntry.id == demo_kb["shut-faq18"]))
        assert entry is not None
        entry.status = FaqStatus.draft
    result = await answerer.answer("Số hotline tuyển sinh của trường là bao nhiêu?")
    assert result.faq_external_id != "shut-faq18"


@pytest.mark.parametrize(
    "question",
    [
        "",
        "   \n\t ",
        "😀😀😀",
        "?!...",
        "\x00\x01\x02 học phí \x7f",
        "'; DROP TABLE faq_entries; --",
        "<script>alert('x')</script> học phí bao nhiêu",
        "hoc phi " * 15000,  # ~120 KB
        "\udcff\udcfe binary \ufffd\ufffd",
    ],
)
async def test_bad_input_gets_a_reply_not_a_crash(answerer: Answerer, question: str) -> None:
    result = await answerer.answer(question)
    assert result.tier in {"faq", "documents", "fallback"}
    assert result.answer.strip()
    assert "<script>" not in result.answer


def test_clean_question_drops_control_characters_and_caps_length() -> None:
    assert clean_question("a\x00b\x1bc") == "a b c"
    assert len(clean_question("x" * 200_000)) == MAX_QUESTION_CHARS


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Học phí chương trình chuẩn năm học 2031 là bao nhiêu?", "year 2031"),
        ("Học phí chương trình chuẩn của Đại học Bách khoa là bao nhiêu?", "institution"),
    ],
)
async def test_documents_that_never_name_the_year_or_school_asked_about_do_not_answer(
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
    demo_kb: object,
    question: str,
    named: str,
) -> None:
    no_faq = verbatim_only(parts)
    result = await Answerer(no_faq, sessionmaker).answer(question)
    assert result.tier == "fallback"
    assert f"never mention {named}" in result.reason
    assert result.trace["out_of_scope"]
    assert "32.500.000" not in result.answer
    # The guard is what refused them: without it the same chunks answer.
    unchecked = verbatim_only(parts, document_scope=(), near_miss_guard=False)
    assert (await Answerer(unchecked, sessionmaker).answer(question)).tier == "documents"


async def test_documents_that_name_the_year_asked_about_still_answer(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: object
) -> None:
    no_faq = verbatim_only(parts)
    result = await Answerer(no_faq, sessionmaker).answer("Học phí chương trình chuẩn năm 2026?")
    assert result.tier == "documents"
    assert "out_of_scope" not in result.trace


async def test_a_question_typed_without_marks_is_read_restored(answerer: Answerer) -> None:
    result = await answerer.answer("hoc phi chuong trinh chuan nam 2026 la bao nhieu")
    assert result.query["restored"] == "học phí chương trình chuẩn năm 2026 là bao nhiêu"
    assert result.tier in {"faq", "documents"}, result.reason
    assert "restore" in result.timings_ms
    data = result.to_json()
    assert data["query"] == {"restored": result.query["restored"], "parts": []}


async def test_a_question_written_with_marks_is_not_restored(answerer: Answerer) -> None:
    result = await answerer.answer("Học phí chương trình chuẩn năm 2026 là bao nhiêu?")
    assert result.query["restored"] is None


async def test_a_two_part_question_brings_the_passages_of_both_parts(answerer: Answerer) -> None:
    question = "Học phí chương trình chuẩn năm 2026 bao nhiêu, ký túc xá đăng ký ở đâu?"
    result = await answerer.answer(question)
    assert result.query["parts"] == [
        "Học phí chương trình chuẩn năm 2026 bao nhiêu",
        "ký túc xá đăng ký ở đâu?",
    ]
    assert result.tier == "documents", result.reason
    passages = {Path(h.source).name for h in result.trace["passing"]}
    assert {"hoc-phi-2026.md", "ky-tuc-xa.md"} <= passages
    # Answered part by part, each under a heading naming what it asks, not the student's words.
    body = result.answer.split("\n\nNguồn:")[0]
    assert "\nHọc phí:\n- " in body
    assert "\nKý túc xá, địa điểm:\n- " in body
    assert "bao nhiêu:" not in body
    assert "ky-tuc-xa.md" in {Path(c.source).name for c in result.citations}


async def test_no_passage_holding_what_is_asked_falls_back_with_related_links(
    answerer: Answerer,
) -> None:
    # The documents speak of the library, never of its phone number: no number is made up,
    # and the closest pages are offered as links that may help (3/6).
    result = await answerer.answer("Hotline của thư viện là số nào?")
    assert result.tier == "fallback"
    assert "abstained" in result.reason
    assert result.related
    assert result.citations == []
    assert "\n\nCó thể liên quan:\n[1] " in result.answer
    for related in result.related:  # an FAQ entry has no address: its question is the link
        assert related.title in result.answer
        assert related.url is None or related.url in result.answer
    assert any(related.url for related in result.related)
    assert "028 3999 1234" in result.answer  # only the office's contact, as in every fallback
    body = result.answer.split("\n\nCó thể liên quan:")[0]
    assert "Xin lỗi" in body


def test_a_part_that_asks_nothing_is_read_with_the_next_one() -> None:
    parts = [
        ("Mình đã tốt nghiệp cao đẳng ngành CNTT", "mình đã tốt nghiệp cao đẳng ngành CNTT"),
        ("hồ sơ dự tuyển gồm những gì", "hồ sơ dự tuyển gồm những gì"),
        ("gửi về đâu ạ?", "gửi về đâu ạ?"),
    ]
    assert asking_parts(parts) == [
        (
            "hồ sơ dự tuyển gồm những gì",
            "mình đã tốt nghiệp cao đẳng ngành CNTT hồ sơ dự tuyển gồm những gì",
        ),
        ("gửi về đâu ạ?", "gửi về đâu ạ?"),
    ]
    statements = [("Em ở Đồng Nai", "em ở Đồng Nai"), ("em thích lập trình", "em thích lập trình")]
    assert asking_parts(statements) == statements
    # Told what says something, a statement that says nothing is left out of the next part.
    chat = [("Hi, I'm a student in HCMC.", "Hi, I'm a student in HCMC."), *parts[1:]]
    kept = asking_parts(chat, says=lambda text: "CNTT" in text)
    assert kept == parts[1:]
    assert asking_parts(parts, says=lambda text: "CNTT" in text) == asking_parts(parts)
