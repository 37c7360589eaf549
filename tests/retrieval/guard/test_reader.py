"""Where a text says each value the guard reads in it (``NearMissGuard.spans``): by an alias,
by a pattern over the words no alias took, in any case, with or without marks. One row a text."""

import pytest

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import load_guard


@pytest.fixture(scope="module")
def guard() -> NearMissGuard:
    return load_guard()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "Học phí ngành Công nghệ thông tin năm 2025?",
            {
                ("attribute", "học phí", "Học phí"),
                ("major", "Công nghệ thông tin", "Công nghệ thông tin"),
                ("year", "2025", "2025?"),
            },
        ),
        (
            "hoc phi nganh khmt",
            {("attribute", "học phí", "hoc phi"), ("major", "Khoa học máy tính", "khmt")},
        ),
        ("miễn giảm 50% học phí", {("attribute", "học phí", "học phí"), ("percent", "50", "50%")}),
        ("xét học bạ", {("method", "học bạ", "xét học bạ")}),
        ("", set()),
    ],
)
def test_each_value_is_said_by_the_words_that_named_it(
    guard: NearMissGuard, text: str, said: set[tuple[str, str, str]]
) -> None:
    spans = guard.spans(text)
    assert {(s.category, s.value, text[s.start : s.end]) for s in spans} >= said
    # Every value read is said somewhere, and nothing is said that is not read.
    assert {(s.category, s.value) for s in spans} == {
        (c, v) for c, values in guard.facets(text).items() for v in values
    }


@pytest.mark.parametrize(
    ("text", "majors"),
    [
        # "viện" before a name makes it an institute's, not the major
        ("Viện Kỹ thuật Phần mềm", set()),
        ("vien ktpm", set()),
        # "viên" folds like "viện" but is no institute; nor does a word of another cell count
        ("sinh viên Kỹ thuật Phần mềm", {"Kỹ thuật phần mềm"}),
        (
            "| Khoa học Máy tính | 96,2% | Kỹ sư phần mềm, nghiên cứu viên |\n"
            "| Kỹ thuật Phần mềm | 97,0% |",
            {"Khoa học máy tính", "Kỹ thuật phần mềm"},
        ),
        ("đại học Kinh tế", set()),
    ],
)
def test_a_word_before_a_name_rules_it_out_only_as_written_in_its_clause(
    guard: NearMissGuard, text: str, majors: set[str]
) -> None:
    assert guard.entities(text).get("major", frozenset()) == majors
