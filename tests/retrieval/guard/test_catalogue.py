"""The school's catalogue majors added to the guard's vocabulary (retrieval.guard.catalogue)."""

from __future__ import annotations

from retrieval.guard.catalogue import guard_with_catalogue, school_majors
from retrieval.guard.vocabulary import load_guard

MAJORS = [
    ("Kế toán", "7340301", []),  # bundled: nothing new
    ("Công nghệ thông Tin học", "7480201", []),  # bundled by its code: another spelling
    ("Thú y", "7640101", ["bác sĩ thú y"]),  # short: read only after "ngành"
    ("Công nghệ chế biến lâm sản", "7549001", ["cnlsa"]),
]


def test_catalogue_majors_extend_bundled_values_or_become_their_own() -> None:
    values = school_majors(MAJORS, load_guard().vocabulary)
    assert values == {
        "Công nghệ thông tin": ["Công nghệ thông Tin học"],
        "ngành Thú y": ["bác sĩ thú y", "7640101"],
        "Công nghệ chế biến lâm sản": ["cnlsa", "7549001"],
    }


def test_the_guard_reads_the_school_s_majors_and_leaves_the_bundled_guard_alone() -> None:
    base = load_guard()
    guard = guard_with_catalogue(base, MAJORS)
    majors = lambda g, q: g.facets(q).get("major", frozenset())  # noqa: E731
    assert majors(guard, "hoc phi nganh cong nghe che bien lam san") == {
        "Công nghệ chế biến lâm sản"
    }
    assert majors(guard, "cnlsa lấy bao nhiêu điểm") == {"Công nghệ chế biến lâm sản"}
    assert majors(guard, "ngành thú y học mấy năm") == {"ngành Thú y"}
    assert majors(guard, "mã 7640101 là ngành gì") == {"ngành Thú y"}
    assert majors(guard, "thú y là gì") == set()  # two words alone: an ordinary phrase
    assert majors(guard, "cntt tin học") == {"Công nghệ thông tin"}
    assert majors(base, "hoc phi nganh cong nghe che bien lam san") == set()
    assert guard_with_catalogue(base, [("Kế toán", "7340301", [])]) is base


def test_last_year_is_read_as_the_year_before_the_admission_year() -> None:
    base = load_guard()
    guard = guard_with_catalogue(base, [], years={2025: ["năm ngoái", "last year"]})
    years = lambda g, q: g.facets(q).get("year", frozenset())  # noqa: E731
    assert years(guard, "nam ngoai nganh khmt tuyen bn chi tieu") == {"2025"}
    assert years(guard, "Năm ngoái ngành Thiết kế Vi mạch lấy bao nhiêu điểm") == {"2025"}
    assert years(guard, "what was the cut-off last year") == {"2025"}
    assert years(guard, "chỉ tiêu năm 2026") == {"2026"}
    assert years(base, "chỉ tiêu năm ngoái") == set()


def test_a_school_year_is_the_year_it_starts() -> None:
    guard = load_guard()
    years = lambda q: guard.facets(q).get("year", frozenset())  # noqa: E731
    # "năm học 2025-2026" is not answered by the school year 2026–2027 (they share no year)
    assert years("hp nganh cntt nam hoc 2025-2026 la bn") == {"2025"}
    assert years("Năm học 2026–2027, học phí chương trình chuẩn là 32.500.000 đồng/năm") == {"2026"}
    assert years("tuition for the academic year 2026-2027") == {"2026"}
    # two years named one after the other without "năm học" stay two
    assert years("điểm chuẩn 2024, 2025") == {"2024", "2025"}
