"""The year a text speaks of, until when it holds, and the admission year."""

from __future__ import annotations

from datetime import date

from retrieval.facts.years import admission_year, dates_in, valid_until, year_of


def test_dates_are_read_in_both_vietnamese_forms() -> None:
    text = "Hạn nộp đến 20/7/2026; nhập học ngày 5 tháng 9 năm 2026; 31/2/2026 is no date."
    assert dates_in(text) == [date(2026, 7, 20), date(2026, 9, 5)]


def test_one_year_or_a_school_year_is_the_year_spoken_of() -> None:
    assert year_of("Chỉ tiêu năm 2026", "240 sinh viên") == 2026
    assert year_of("Học phí năm học 2026–2027") == 2026
    assert year_of("Điểm chuẩn 2024 và 2026") is None
    assert year_of("Học phí là bao nhiêu") is None


def test_valid_until_is_the_last_date_still_ahead_when_written() -> None:
    answer = "Trường thành lập ngày 1/1/2010. Hạn nộp hồ sơ: 20/7/2026, nhập học 5/9/2026."
    assert valid_until(answer, written=date(2026, 6, 1)) == date(2026, 9, 5)
    assert valid_until(answer, written=date(2026, 12, 1)) is None  # all of it history by then


def test_the_admission_year_is_the_setting_else_the_latest_title_year_up_to_next_year() -> None:
    titles = ["Điểm chuẩn năm 2025", "Học phí năm học 2026–2027", "Kế hoạch 2030", "Giới thiệu"]
    today = date(2026, 3, 1)
    assert admission_year(0, titles, today) == 2026  # 2030 is too far ahead to be this year's
    assert admission_year(2027, titles, today) == 2027
    assert admission_year(0, ["Giới thiệu"], today) == 2026
