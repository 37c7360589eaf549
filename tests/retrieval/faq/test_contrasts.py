"""Contrasts learned from a school's own FAQ questions and headings (1/4): the values that tell
alike texts apart, read back in a question and an entry, and the near misses they make."""

from __future__ import annotations

import pytest

from retrieval.faq.contrasts import contrast_words, learn_contrasts


def values(texts: list[str]) -> dict[str, set[str]]:
    learned = learn_contrasts(texts)
    return {head: {" ".join(v) for v in vs} for head, vs in learned.values.items()}


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # one value apart, the words around it shared
        (
            ["Điểm chuẩn cơ sở phía Bắc năm 2025", "Điểm chuẩn cơ sở phía Nam năm 2025"],
            {"phia": {"bac", "nam"}},
        ),
        # a value of two words, and a word left out elsewhere ("được đăng ký")
        (
            [
                "Sinh viên chương trình chuẩn cần điều kiện gì để được đăng ký làm khóa luận?",
                "Sinh viên chương trình tiên tiến cần điều kiện gì để làm khóa luận?",
            ],
            {"trinh": {"chuan", "tien tien"}},
        ),
        # an ordinal in words or digits is one value
        (
            ["Xét tuyển cách thứ hai gồm những gì", "Xét tuyển cách thứ 3 gồm những gì"],
            {"thu": {"2", "3"}},
        ),
        # two different sentences teach nothing
        (["Học phí ngành CNTT bao nhiêu", "Ký túc xá ở đâu vậy"], {}),
        # a difference at the very start has no head
        (["Bắc Ninh có cơ sở không", "Nam Định có cơ sở không"], {}),
    ],
)
def test_values_one_apart_are_learned_after_their_head(
    texts: list[str], expected: dict[str, set[str]]
) -> None:
    assert values(texts) == expected


def test_a_question_naming_another_value_conflicts_with_the_entry() -> None:
    learned = learn_contrasts(["Điểm chuẩn cơ sở phía Bắc", "Điểm chuẩn cơ sở phía Nam"])
    asked = learned.named(contrast_words("diem chuan co so phia nam bao nhieu"))
    assert learned.conflicts(asked, contrast_words("Điểm chuẩn cơ sở phía Bắc")) == [
        ("phia", ("nam",))
    ]
    assert learned.conflicts(asked, contrast_words("Điểm chuẩn cơ sở phía Nam")) == []
    # an entry that names no value after the head does not conflict, but does not say it
    assert learned.conflicts(asked, contrast_words("Điểm chuẩn các cơ sở")) == []
    assert learned.unsaid(asked, contrast_words("Điểm chuẩn các cơ sở")) == [("phia", ("nam",))]


def test_an_ordinal_in_words_conflicts_with_another_in_digits() -> None:
    learned = learn_contrasts(["Hồ sơ xét tuyển cách thứ hai", "Hồ sơ xét tuyển cách thứ ba"])
    asked = learned.named(contrast_words("hồ sơ cách thứ 3 gồm gì"))
    assert learned.conflicts(asked, contrast_words("Hồ sơ xét tuyển cách thứ hai")) == [
        ("thu", ("3",))
    ]


def test_swaps_make_one_value_away_questions() -> None:
    learned = learn_contrasts(["Điểm chuẩn cơ sở phía Bắc", "Điểm chuẩn cơ sở phía Nam"])
    swapped = [" ".join(w) for *_, w in learned.swaps(contrast_words("Điểm chuẩn cơ sở phía Bắc"))]
    assert swapped == ["diem chuan co so phia nam"]
