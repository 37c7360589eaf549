"""Sentence units of the extractive answerer (bot.extractive.sentences): a quote never ends on
an abbreviation's full stop (3/6: "… Đại học Quốc gia TP. [1]" / "- Hồ Chí Minh: …")."""

from __future__ import annotations

import pytest

from bot.extractive import sentences
from retrieval.text import ends_with_abbreviation


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Trường trực thuộc Đại học Quốc gia TP. Hồ Chí Minh. Trường thành lập năm 2006.",
            ["Trường trực thuộc Đại học Quốc gia TP. Hồ Chí Minh.", "Trường thành lập năm 2006."],
        ),
        (
            "Cố vấn là ThS. Nguyễn Văn An và PGS. TS. Trần Bình. Liên hệ phòng đào tạo.",
            ["Cố vấn là ThS. Nguyễn Văn An và PGS. TS. Trần Bình.", "Liên hệ phòng đào tạo."],
        ),
        (
            "Các ngành CNTT, KHMT v.v. đều xét tuyển. Hạn nộp là 30/6.",
            ["Các ngành CNTT, KHMT v.v. đều xét tuyển.", "Hạn nộp là 30/6."],
        ),
        # a word or a longer acronym before the full stop ends the sentence
        (
            "Trường ở Việt Nam. Thí sinh nộp trực tuyến.",
            ["Trường ở Việt Nam.", "Thí sinh nộp trực tuyến."],
        ),
        (
            "Theo quy định của ĐHQG. Thí sinh nộp hồ sơ.",
            ["Theo quy định của ĐHQG.", "Thí sinh nộp hồ sơ."],
        ),
        # numbers and dates hold
        (
            "Học phí là 40.000.000 đồng. Hạn nộp 15.6.2026 lúc 17h.",
            ["Học phí là 40.000.000 đồng.", "Hạn nộp 15.6.2026 lúc 17h."],
        ),
    ],
)
def test_sentences_do_not_end_on_an_abbreviation(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "abbreviated"),
    [
        ("Quốc gia TP.", True),
        ("gặp ThS.", True),
        ("PGS.", True),
        ("v.v.", True),
        ("(Tp.", True),
        ("Việt Nam.", False),
        ("của ĐHQG.", False),
        ("năm 2026.", False),
        ("là gì?", False),
    ],
)
def test_an_abbreviation_s_full_stop_is_recognised(text: str, abbreviated: bool) -> None:
    assert ends_with_abbreviation(text) is abbreviated
