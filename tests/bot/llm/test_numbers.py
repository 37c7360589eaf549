"""The number check of the offline LLM jobs (bot.llm.numbers): whole numbers, compared by value."""

from __future__ import annotations

from bot.llm.numbers import has_number, invented_numbers, missing_numbers


def test_numbers_are_compared_whole_and_as_written() -> None:
    assert has_number("nộp trước 15/9/2026.", "15/9/2026")
    assert not has_number("năm 2025", "25")
    assert not has_number("28.55 điểm", "28.5")
    assert missing_numbers("Mức thu 28.500.000 đồng, mã 7480101", "Mức thu 28,5 triệu, mã 7480101")
    assert missing_numbers("phòng 4 người", "phòng bốn người") == ["4"]
    assert invented_numbers("giá 450.000 đồng, 99 chỗ", ["giá 450.000 đồng"]) == ["99"]
    assert invented_numbers("tổ hợp A00", ["khối A00"]) == []


def test_an_answer_may_only_carry_numbers_of_its_chunk() -> None:
    chunk = "Học phí năm học 2025-2026 là 32.500.000 đồng, hạn 30/08/2025, KTX 3000 đồng."
    assert invented_numbers("32.500.000 đồng, trước 30/8/2025", [chunk]) == []
    assert invented_numbers("năm 2026, gửi xe 3.000 đồng", [chunk]) == []
    assert invented_numbers("35.000.000 đồng từ 01/09/2025", [chunk]) == [
        "35.000.000",
        "01/09/2025",
    ]
