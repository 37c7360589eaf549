"""A message of several parts on the demo knowledge base: the facts tables answer each part
they hold, read alone with the names the other parts give it, and tier 2 quotes the documents
for the rest (bot.answer.facts.tier ``by_part``, bot.answer.documents). A score check does not
answer the fee or the deadline asked after it."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.llm.client import LlmClient
from retrieval.text.folding import fold
from tests.fakes.openai_stub import OpenAIStub

MIXED = "em được 25 điểm có đỗ ngành cntt không, đăng ký ký túc xá từ ngày nào đến ngày nào"


@pytest.mark.parametrize("folded", [False, True])
async def test_every_part_the_tables_hold_is_answered_from_them(
    answerer: Answerer, folded: bool
) -> None:
    # whether KTMT takes D01, then this year's quota: the second part takes the first's major
    question = (
        "Cho e hỏi ngành kỹ thuật máy tính có xét khối D01 ko ạ, năm nay tuyển bao nhiêu chỉ tiêu"
    )
    result = await answerer.answer(fold(question) if folded else question)
    assert result.why.get("facts") == "whether; chỉ tiêu", result.reason
    assert "không xét D01" in result.answer
    assert "Ngành Kỹ thuật Máy tính (mã 7480106), 2026: 150 [1]" in result.answer


@pytest.mark.parametrize("folded", [False, True])
async def test_a_score_check_and_a_deadline_are_each_answered(
    answerer: Answerer, folded: bool
) -> None:
    result = await answerer.answer(fold(MIXED) if folded else MIXED)
    assert result.tier == "documents", result.answer
    assert result.why["documents"]["how"] == "facts_by_part", result.reason
    # the tables' comparison, as they write the cut-off, then the documents' dates
    assert "31/8/2026" in result.answer
    assert "điểm chuẩn 25,90" in result.answer.split("31/8/2026")[0]
    # sources numbered in the order the reader meets them
    markers = [int(n) for n in re.findall(r"\[(\d+)\]", result.answer.split("\nNguồn:")[0])]
    assert markers[0] == 1
    assert [c.n for c in result.citations] == list(range(1, len(result.citations) + 1))
    assert sorted(set(markers)) == [c.n for c in result.citations]


async def test_a_part_the_documents_do_not_hold_is_said_missing_beside_the_tables_reply(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("e dc 24 diem co dau nganh httt ko, truong co cho nuoi meo ko")
    assert result.tier == "documents", result.answer
    assert "điểm chuẩn 24,60" in result.answer
    assert "Mình chưa tìm thấy thông tin" in result.answer


async def test_with_an_llm_the_tables_values_are_still_quoted(
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
    demo_kb: dict[str, int],
    stub: OpenAIStub,
) -> None:
    llm_settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
    )
    client = LlmClient(llm_settings, max_retries=0)
    try:
        with_llm = Answerer(
            replace(
                parts, settings=parts.settings.model_copy(update={"llm": llm_settings}), llm=client
            ),
            sessionmaker,
        )
        stub.script_chat("Điểm chuẩn ngành CNTT là 30 điểm [1].")
        result = await with_llm.answer(MIXED)
    finally:
        await client.aclose()
    assert stub.requests_to("/v1/chat/completions") == []
    assert "điểm chuẩn 25,90" in result.answer
    assert "30 điểm" not in result.answer


async def test_a_part_naming_nothing_the_tables_hold_is_not_answered_with_their_value(
    answerer: Answerer,
) -> None:
    # "có tuyển đủ không" asks no quota of its own: given this year's quota (80) it would
    # answer last year's question with it
    result = await answerer.answer(
        "Năm ngoái ngành Thiết kế Vi mạch tuyển bao nhiêu chỉ tiêu, có tuyển đủ không ạ?"
    )
    assert "2026: 80" not in result.answer
    assert "facts" not in result.why


@pytest.mark.parametrize(
    "question",
    [
        "hp clc nganh khmt 1 nam het nhiu ad, so vs he chuan thi mac hon bn",
        "học phí clc ngành cntt mắc hơn chương trình thường nhiều không",
    ],
)
async def test_a_programme_compared_with_the_standard_one_is_given_beside_it(
    answerer: Answerer, question: str
) -> None:
    result = await answerer.answer(question)
    assert result.why.get("facts") == "học phí", result.reason
    assert "chương trình chất lượng cao, 2026: 58.000.000 đồng/năm" in result.answer
    assert "2026: 32.500.000 đồng/năm" in result.answer


async def test_an_international_student_s_fee_is_not_the_tables(answerer: Answerer) -> None:
    # the tables hold the fees Vietnamese students pay: "how much" asks an amount of its own
    # kind, and the documents quote the international students' table
    result = await answerer.answer(
        "How much is the yearly tuition for Data Science for international students? "
        "Also is health insurance mandatory and how much"
    )
    assert "36.000.000" not in result.answer


@pytest.mark.parametrize("folded", [False, True])
async def test_a_code_and_a_combination_asked_together_are_both_answered(
    answerer: Answerer, folded: bool
) -> None:
    # "hok" closes the second part: it asks whether, of the major the first part names
    question = "mã ngành kỹ thuật phần mềm là gì vậy, có xét khối D01 hok ạ"
    result = await answerer.answer(fold(question) if folded else question)
    assert "7480103" in result.answer, result.reason
    assert "xét D01" in result.answer


async def test_a_part_asking_what_a_method_takes_gets_its_cut_off(answerer: Answerer) -> None:
    # "còn xét học bạ thì … lấy bao nhiêu điểm" reads like "còn xét … không" but asks a figure:
    # no table says whether ATTT admits on học bạ this year, and the cut-off answers it
    result = await answerer.answer("con xet hoc ba thi nganh attt lay bao nhieu diem")
    assert result.why.get("facts") == "điểm chuẩn", result.reason
    assert "27,25" in result.answer
