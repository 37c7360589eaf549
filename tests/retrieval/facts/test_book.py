"""The facts book: majors named by a question, and facts that disagree left out."""

from __future__ import annotations

from retrieval.facts.book import build_book, conflicts
from retrieval.facts.model import CUTOFF, Fact
from retrieval.guard.vocabulary import load_guard

THPT = "thi tốt nghiệp THPT"


def _fact(major: str, value: float | None, *, year: int = 2025, offered: bool = True) -> Fact:
    return Fact(CUTOFF, major, None, None, THPT, year, str(value), value, offered)


def test_two_tables_that_disagree_on_a_value_answer_nothing_of_it() -> None:
    facts = [
        _fact("Khoa học máy tính", 26.85),
        _fact("Khoa học máy tính", None, offered=False),  # another table's "—"
        _fact("Khoa học máy tính", 26.4, year=2024),
        _fact("Kỹ thuật phần mềm", 26.1),
        _fact("Kỹ thuật phần mềm", 26.1),  # the same value twice agrees
    ]
    assert len(conflicts(facts)) == 1
    book = build_book(facts, [])
    assert sorted((f.major, f.year) for f in book.facts) == [
        ("Khoa học máy tính", 2024),
        ("Kỹ thuật phần mềm", 2025),
        ("Kỹ thuật phần mềm", 2025),
    ]


def test_majors_are_found_by_name_initials_code_or_the_vocabulary_not_in_a_school_name() -> None:
    book = build_book(
        [_fact("Công nghệ thông tin", 25.9), _fact("Khoa học máy tính", 26.85)],
        [("major", "Khoa học máy tính", "7480101", ["cs"])],
    )
    names = lambda q: [  # noqa: E731
        m.name for m in book.majors_in(q, load_guard().facets(q).get("major", ()))
    ]
    assert names("khmt với cntt ngành nào cao hơn") == ["Khoa học máy tính", "Công nghệ thông tin"]
    assert names("mã 7480101 lấy bao nhiêu điểm") == ["Khoa học máy tính"]
    assert names("ngành cs có khó không") == ["Khoa học máy tính"]
    assert names("Trường Đại học Công nghệ Thông tin ở đâu") == []


def test_a_short_name_read_after_nganh_by_the_guard_names_its_major() -> None:
    book = build_book([], [("major", "Thú y", "7640101", [])])
    found = book.major_named("ngành Thú y")
    assert found is not None
    assert found.name == "Thú y"
