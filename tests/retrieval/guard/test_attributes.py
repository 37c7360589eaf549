"""What a question asks, as the guard's vocabulary reads it: a deposit is not a fee, an amount
is not a major's code, the student's own combination is not asked for, and English and short
words name the attribute they mean."""

from __future__ import annotations

import pytest

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import load_guard


@pytest.fixture(scope="module")
def guard() -> NearMissGuard:
    return load_guard()


def test_an_amount_is_not_read_as_a_major_code(guard: NearMissGuard) -> None:
    # seven digits once the thousands dots are gone, like 7480201: the unit after them says
    # which ("1.000.000 đồng" names no major the question could conflict with)
    for amount in ("Tiền đặt cọc: 1.000.000 đồng.", "phí 2.790.000đ", "học phí 5.500.000 VND"):
        assert "major_code" not in guard.facets(amount), amount
    assert guard.facets("mã 7340999 là ngành gì")["major_code"] == {"7340999"}


@pytest.mark.parametrize(
    ("question", "deposit"),
    [
        ("Có phải đóng tiền cọc không?", True),
        ("ktx dat coc bn v ad", True),
        ("nhập học đóng tiền gì", False),
        ("dong tien hoc o dau", False),
    ],
)
def test_a_deposit_is_not_a_fee(guard: NearMissGuard, question: str, deposit: bool) -> None:
    # a deposit is paid back: "đóng tiền cọc" asks about it, not about the tuition
    asked = guard.facets(question)["attribute"]
    assert ("tiền đặt cọc" in asked) is deposit
    assert ("học phí" in asked) is not deposit


@pytest.mark.parametrize(
    ("question", "attribute"),
    [
        ("How much does the health insurance cost per year?", "bảo hiểm y tế"),
        ("thẻ bhyt có bắt buộc không", "bảo hiểm y tế"),
        ("what's the price of a twin room in the dorm?", "ký túc xá"),
        ("What's the admission code of the IT degree taught in English?", "mã ngành"),
        ("xe buyt tu co so chinh xuong binh duong co mat tien ko ad", "xe đưa đón"),
        ("is there a shuttle bus between the campuses?", "xe đưa đón"),
        ("hp tinh theo tin chi bn, hoc vao nhung hom nao v ad", "lịch học"),
    ],
)
def test_what_is_asked_in_english_and_in_short(
    guard: NearMissGuard, question: str, attribute: str
) -> None:
    assert attribute in guard.facets(question)["attribute"]
    # an amount says học phí, never the insurance: only a text naming it does
    assert not guard.says_attribute(frozenset({"bảo hiểm y tế"}), "Tuition: 48,750,000 VND/year")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("ngành khmt xét khối gì", True),
        ("em thi khối nào thì vào được", True),
        # the student's own combination, said beside what is asked
        ("nganh khmt nam ngoai lay bn diem, e thi khoi A00", False),
        ("em xét khối D01 được không", False),
    ],
)
def test_a_combination_named_after_khoi_is_not_asked_for(
    guard: NearMissGuard, question: str, asked: bool
) -> None:
    assert ("tổ hợp" in guard.facets(question).get("attribute", ())) is asked


@pytest.mark.parametrize(
    "question",
    [
        "nganh khmt nam ngoai lay bao nhieu diem thi thpt vay a",
        "ktpm lấy mấy điểm học bạ",
        "clc thi lay nhieu diem k",
    ],
)
def test_how_many_points_a_major_takes_asks_its_cut_off(
    guard: NearMissGuard, question: str
) -> None:
    # read before the method "điểm thi THPT" takes the word "điểm" for itself
    facets = guard.facets(question)
    assert facets["attribute"] == {"điểm chuẩn"}
    if "thpt" in question:
        assert facets["method"] == {"thi tốt nghiệp THPT"}
