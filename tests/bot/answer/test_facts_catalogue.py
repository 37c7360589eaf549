"""The catalogue's list of majors, through the whole answerer on the demo knowledge base
(bot.answer.facts.catalogue.all_majors): asked for every major, the facts tier names them all;
asked for the majors that have something, it leaves the question to the others."""

from __future__ import annotations

import pytest

from bot.answer.answerer import Answerer


@pytest.mark.parametrize(
    "question", ["truong co nhung nganh nao vay ad", "Trường có những ngành nào?", "có mấy ngành"]
)
async def test_the_majors_asked_for_are_every_major_of_the_catalogue(
    answerer: Answerer, question: str
) -> None:
    result = await answerer.answer(question)
    assert result.tier == "documents", result.answer
    assert result.why.get("facts") == "every major", result.reason
    for name in ("Khoa học Dữ liệu", "Thương mại Điện tử", "Thiết kế Vi mạch"):
        assert name in result.answer
    assert result.citations


@pytest.mark.parametrize(
    "question",
    [
        "những ngành nào xét học bạ",
        "ngành nào có học phí thấp nhất",
        "những ngành nào có học bổng",
        "những ngành nào dễ xin việc",
    ],
)
async def test_a_list_of_majors_about_something_is_not_the_whole_catalogue(
    answerer: Answerer, question: str
) -> None:
    result = await answerer.answer(question)
    assert result.why.get("facts") != "every major"
