"""The kinds of value a passage unit holds, as the guard's vocabulary reads them (a date, an
amount...): tier 2 leads a question asking one with a unit that holds it."""

import pytest

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import load_guard


@pytest.fixture(scope="module")
def guard() -> NearMissGuard:
    return load_guard()


@pytest.mark.parametrize(
    ("kind", "text", "holds"),
    [
        ("date", "Học phí nộp chậm nhất ngày 28/8/2026.", True),
        ("date", "Kết quả gửi trong 5 ngày làm việc.", True),
        ("date", "Chương trình học 4 năm.", True),
        # "học kỳ 1 năm học 2026–2027" names a term and a school year, not a time
        ("date", "Mức học phí học kỳ 1 năm học 2026–2027: 16.250.000 đồng", False),
        ("quantity", "Điểm chuẩn ngành CNTT là 27.5 điểm.", True),
        ("quantity", "Học phí 1.050.000 đồng/tín chỉ.", True),
        ("quantity", "Thời gian đào tạo 4 năm.", True),
        # "1.Thí sinh…" numbers a list item; a year is no figure asked "bao nhiêu"
        ("quantity", "VII. ĐĂNG KÝ: 1.Thí sinh đăng ký dự tuyển tại cổng tuyển sinh.", False),
        ("quantity", "Tuyển sinh năm 2025.", False),
        ("link", "Website của khoa: khmt.uit.edu.vn", True),
        ("link", "Xem chi tiết tại https://tuyensinh.uit.edu.vn/thong-bao", True),
        ("link", "Điểm trung bình từ 3.5 trở lên.", False),
        ("link", "Liên hệ văn phòng tại TP. Hồ Chí Minh.", False),
    ],
)
def test_a_unit_holds_a_value_of_a_kind_or_not(
    guard: NearMissGuard, kind: str, text: str, holds: bool
) -> None:
    assert guard.holds({kind}, text) is holds


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("website khoa khoa hoc may tinh la gi", {"link"}),
        ("email phòng đào tạo là gì", {"email"}),
        ("link đăng ký xét tuyển ở đâu ạ", {"link", "address"}),
        # asks how to do something on the web site, not for its address
        ("đăng ký trên website như thế nào", set()),
        # folded "máy tính" asks no figure ("mấy")
        ("Ngành khoa học máy tính học ở đâu", {"address"}),
        ("có mấy ngành", {"quantity"}),
    ],
)
def test_what_a_question_asks_for(guard: NearMissGuard, question: str, kinds: set[str]) -> None:
    assert guard.asked_kinds(question) == kinds
