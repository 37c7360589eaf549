"""Tier 1 on the demo knowledge base, end to end through the answerer (2/6): the FAQ examples its
README lists, every stored phrasing asked verbatim, and the look-alikes it sets up."""

from __future__ import annotations

import re

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.lookup import FAQ_PASSAGE_PROBABILITY
from bot.answer.parts import AnswererParts
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.faq_files import read_faq_file
from tests.bot.answer._support import verbatim_only

FAQ_QUESTIONS = {d.external_id: d.question for d in read_faq_file(demo_kb_dir() / "faq.jsonl")}
FAQ_ANSWERS = {d.external_id: d.answer for d in read_faq_file(demo_kb_dir() / "faq.jsonl")}


def _readme_examples(section: str) -> list[tuple[str, str | None]]:
    """(question, expected FAQ id or None) from one "## Câu hỏi demo" section of the README."""
    text = (demo_kb_dir() / "README.md").read_text("utf-8")
    body = text.split(f"## Câu hỏi demo – {section}", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in body.splitlines():
        found = re.match(r"\d+\. `([^`]+)`(?: → (shut-faq\d+))?", line.strip())
        if found:
            out.append((found.group(1), found.group(2)))
    return out


FAQ_EXAMPLES = _readme_examples("tầng 1")
DOCUMENT_EXAMPLES = _readme_examples("trả lời từ tài liệu")
OUT_OF_SCOPE = _readme_examples("ngoài phạm vi")


def test_the_readme_lists_examples_of_every_kind() -> None:
    assert len(FAQ_EXAMPLES) >= 5
    assert all(expected for _, expected in FAQ_EXAMPLES)
    assert len(DOCUMENT_EXAMPLES) >= 5
    assert len(OUT_OF_SCOPE) >= 3


@pytest.mark.parametrize(("question", "expected"), FAQ_EXAMPLES)
async def test_every_readme_faq_example_is_answered_from_its_entry(
    answerer: Answerer, question: str, expected: str
) -> None:
    # Verbatim when tier 1 is sure enough at the default risk; otherwise the entry is tier 2's
    # first passage: its answer quoted sentence by sentence, cited as the FAQ entry.
    result = await answerer.answer(question)
    if result.tier == "faq":
        assert result.faq_external_id == expected
        return
    assert result.tier == "documents", (result.tier, result.trace.get("faq"))
    cited = result.citations[0]
    assert (cited.title, cited.chunk_id) == (FAQ_QUESTIONS[expected], None)
    first_sentence = FAQ_ANSWERS[expected].split(". ")[0]
    assert first_sentence in result.answer


@pytest.mark.parametrize(("question", "_"), DOCUMENT_EXAMPLES + OUT_OF_SCOPE)
async def test_readme_examples_no_entry_covers_get_no_faq_answer(
    answerer: Answerer, question: str, _: object
) -> None:
    assert (await answerer.answer(question)).tier != "faq"


async def test_every_stored_question_and_variant_asked_verbatim_answers_its_entry(
    answerer: Answerer,
) -> None:
    wrong = []
    for draft in read_faq_file(demo_kb_dir() / "faq.jsonl"):
        for phrasing in (draft.question, *draft.variants):
            result = await answerer.answer(phrasing)
            if (result.tier, result.faq_external_id) != ("faq", draft.external_id):
                wrong.append((phrasing, result.tier, result.faq_external_id))
    assert wrong == []


async def test_an_entry_tier_1_turns_down_is_quoted_and_cited_in_tier_2(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: dict[str, int]
) -> None:
    # No tier-1 scorer: tier 1 abstains, but the hotline entry the guard let through is the
    # first passage of the documents answer, cited as the FAQ entry.
    strict = Answerer(verbatim_only(parts), sessionmaker)
    result = await strict.answer("số điện thoại phòng tuyển sinh là gì vậy")
    assert result.tier == "documents"
    assert result.trace["faq_passage"] == demo_kb["shut-faq18"]
    assert "028 3999 1234" in result.answer
    cited = result.citations[0]
    assert cited.title == FAQ_QUESTIONS["shut-faq18"]
    assert cited.chunk_id is None
    assert all(c > 0 for c in result.chunk_ids)


async def test_an_entry_the_guard_refuses_is_no_passage(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: dict[str, int]
) -> None:
    strict = Answerer(verbatim_only(parts), sessionmaker)
    result = await strict.answer("Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?")
    assert "faq_passage" not in result.trace
    assert demo_kb["shut-faq02"] not in {-c for c in result.chunk_ids}


async def test_an_entry_tier_1_finds_likelier_wrong_is_no_passage(answerer: Answerer) -> None:
    # The likeliest entry for a question about which majors a combination opens is the school
    # code's, at a low probability: quoted in tier 2, it answered something else with confidence.
    result = await answerer.answer("em hoc khoi toan sinh anh thi dang ky duoc nhung nganh nao a")
    considered = result.trace["faq"].considered
    assert considered is not None
    assert (considered.probability or 0.0) < FAQ_PASSAGE_PROBABILITY
    assert "faq_passage" not in result.trace
