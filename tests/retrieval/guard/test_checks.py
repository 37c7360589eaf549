import time
from pathlib import Path

import pytest

from bot.core.errors import ConfigError
from bot.core.settings import TextSettings
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Conflict, GuardVerdict
from retrieval.guard.vocabulary import load_guard


@pytest.fixture(scope="module")
def guard() -> NearMissGuard:
    return load_guard()


def _categories(verdict: GuardVerdict) -> set[str]:
    return {c.category for c in verdict.conflicts}


# -- what passes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "faq"),
    [
        # the same question without diacritics
        (
            "diem chuan nganh khoa hoc may tinh nam 2024 la bao nhieu",
            "Điểm chuẩn ngành Khoa học máy tính năm 2024 là bao nhiêu?",
        ),
        # an abbreviation is the major it stands for
        ("khmt 2024 lấy bn điểm v ad", "Điểm chuẩn ngành Khoa học máy tính năm 2024 là bao nhiêu?"),
        ("hoc phi nganh khmt", "Học phí ngành Khoa học Máy tính là bao nhiêu?"),
        # a major code is the major it codes
        ("Ngành 7480106 xét khối nào?", "Ngành Kỹ thuật máy tính xét tuyển những tổ hợp nào?"),
        # a school year spanning the FAQ's year
        (
            "Học phí liên thông CNTT năm học 2025-2026 là bao nhiêu?",
            "Học phí chương trình liên thông đại học ngành CNTT năm 2025 là bao nhiêu?",
        ),
        # no year asked: the dated FAQ states its year in the answer
        ("điểm chuẩn ktpm", "Điểm chuẩn ngành Kỹ thuật phần mềm năm 2024 là bao nhiêu?"),
        # a method named only by the question: the FAQ covers every method
        (
            "Điểm chuẩn KHMT 2024 theo điểm thi THPT?",
            "Điểm chuẩn ngành Khoa học máy tính năm 2024 là bao nhiêu?",
        ),
        # 7 semesters are 3.5 years; "1 kỳ" is "per semester"
        (
            "học phí BCU nhóm đối tượng 1 (7 học kỳ) đóng bn tiền 1 kỳ",
            "Học phí chương trình BCU cho sinh viên học đủ 3,5 năm (nhóm đối tượng 1)?",
        ),
        # "100%" is "toàn phần"
        ("bcu có hb 100% k ad", "Học bổng toàn phần của chương trình BCU yêu cầu điều kiện gì?"),
        # English question, Vietnamese FAQ
        (
            "What is the tuition fee for Computer Science?",
            "Học phí ngành Khoa học máy tính là bao nhiêu?",
        ),
        # the regular programme named explicitly is the same as naming none
        (
            "Học phí chương trình chuẩn ngành CNTT?",
            "Học phí ngành Công nghệ thông tin là bao nhiêu?",
        ),
    ],
)
def test_same_question_in_other_words_passes(guard: NearMissGuard, query: str, faq: str) -> None:
    verdict = guard.check(query, faq)
    assert verdict.ok, verdict.reason
    assert verdict.reason == "no conflict"


def test_question_the_guard_cannot_read_is_left_to_the_similarity(guard: NearMissGuard) -> None:
    assert guard.facets("xin chào ạ") == {}
    assert guard.check("xin chào ạ", "Học phí ngành Khoa học máy tính là bao nhiêu?").ok


# -- what is refused --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "faq", "category"),
    [
        (
            "Học phí ngành Kỹ thuật Máy tính là bao nhiêu?",
            "Học phí ngành Khoa học Máy tính là bao nhiêu?",
            "major",
        ),
        ("ktmt xét khối gì v mn", "Ngành Khoa học máy tính xét tuyển những tổ hợp nào?", "major"),
        # a major the school may not have is still a major: never another major's cut-off
        (
            "điểm chuẩn ngành y đa khoa của trường là bao nhiêu",
            "Điểm chuẩn ngành Khoa học Máy tính năm 2025 theo điểm thi THPT là bao nhiêu?",
            "major",
        ),
        (
            "diem chuan cong nghe thong tin viet nhat 2024",
            "Điểm chuẩn ngành Công nghệ thông tin năm 2024 là bao nhiêu?",
            "major",
        ),
        (
            "Điểm chuẩn ngành Khoa học máy tính năm 2024?",
            "Điểm chuẩn ngành Khoa học máy tính năm 2025 là bao nhiêu?",
            "year",
        ),
        (
            "Học phí liên thông ngành CNTT là bao nhiêu?",
            "Học phí ngành Công nghệ thông tin là bao nhiêu?",
            "programme",
        ),
        (
            "Học phí ngành CNTT là bao nhiêu?",
            "Học phí chương trình liên thông ngành CNTT là bao nhiêu?",
            "programme",
        ),
        (
            "Học phí văn bằng 2 ngành CNTT?",
            "Học phí liên thông ngành CNTT là bao nhiêu?",
            "programme",
        ),
        (
            "Học phí ngành Khoa học máy tính năm 2025?",
            "Ngành Khoa học máy tính năm 2025 tuyển bao nhiêu chỉ tiêu?",
            "attribute",
        ),
        (
            "Khi nào công bố kết quả xét tuyển song ngành?",
            "Hạn nộp hồ sơ song ngành là khi nào?",
            "attribute",
        ),
        (
            "Điểm xét tuyển phương thức thi tốt nghiệp THPT tính như thế nào?",
            "Điểm xét tuyển theo phương thức đánh giá năng lực (ĐGNL) được tính như thế nào?",
            "method",
        ),
        (
            "Điểm chuẩn KHMT năm 2024 của Đại học Bách khoa?",
            "Điểm chuẩn ngành Khoa học máy tính năm 2024 là bao nhiêu?",
            "institution",
        ),
        ("Hạn nộp hồ sơ đợt 2 năm 2024?", "Hạn nộp hồ sơ đợt 1 năm 2024 là khi nào?", "round"),
        (
            "Học bổng 70% học phí cần điều kiện gì?",
            "Học bổng toàn phần yêu cầu điều kiện gì?",
            "percent",
        ),
        (
            "Học phí cho người chỉ học 2 học kỳ cuối?",
            "Học phí cho sinh viên học đủ 3,5 năm là bao nhiêu?",
            "duration",
        ),
        (
            "IELTS bao nhiêu thì được học bổng?",
            "IELTS bao nhiêu thì được cộng điểm ưu tiên?",
            "scholarship",
        ),
        ("Ngành nào xét tổ hợp A00?", "Ngành nào xét tổ hợp D01?", "combination"),
        (
            "What is the tuition fee for Computer Engineering?",
            "Học phí ngành Khoa học máy tính là bao nhiêu?",
            "major",
        ),
    ],
)
def test_question_naming_something_else_is_refused(
    guard: NearMissGuard, query: str, faq: str, category: str
) -> None:
    verdict = guard.check(query, faq)
    assert not verdict.ok
    assert category in _categories(verdict), verdict.reason


def test_refusal_reason_names_category_and_values(guard: NearMissGuard) -> None:
    verdict = guard.check("Học phí ngành KTMT?", "Học phí ngành Khoa học Máy tính?")
    assert verdict.conflicts == (
        Conflict(
            "major", frozenset({"Kỹ thuật máy tính"}), frozenset({"Khoa học máy tính"}), "ngành"
        ),
    )
    assert verdict.reason == (
        "major: question names Kỹ thuật máy tính, FAQ names Khoa học máy tính"
    )
    assert verdict.staff_reason == (
        "Câu hỏi nói Kỹ thuật máy tính, mục này nói Khoa học máy tính (ngành)"
    )


def test_a_university_name_is_not_read_as_its_major(guard: NearMissGuard) -> None:
    facets = guard.facets("Trường Đại học Công nghệ Thông tin ở đâu?")
    assert "major" not in facets


def test_durations_in_years_and_semesters_are_compared(guard: NearMissGuard) -> None:
    assert guard.facets("học 3,5 năm")["duration"] == guard.facets("học 7 học kỳ")["duration"]


def test_hostile_and_huge_input_is_read_quickly(guard: NearMissGuard) -> None:
    text = ("Học phí KHMT 2025 😀 <b>'; DROP TABLE x; --</b> | & ! \x00 \u202e " * 3000)[:100_000]
    started = time.perf_counter()
    verdict = guard.check(text, "Học phí ngành Khoa học máy tính năm 2025 là bao nhiêu?")
    assert time.perf_counter() - started < 2.0
    assert verdict.ok, verdict.reason


# -- vocabulary override ----------------------------------------------------------------------


def test_override_names_the_own_school_and_a_partner(guard: NearMissGuard, tmp_path: Path) -> None:
    question, faq = "uit có học bổng bcu k ad", "Chương trình liên kết quốc tế có học bổng không?"
    assert not guard.check(question, faq).ok  # another school, and no programme type named

    path = tmp_path / "guard.yaml"
    path.write_text(
        "ignore: [uit]\n"
        "categories:\n"
        "  programme:\n"
        "    values:\n"
        "      liên kết quốc tế: [bcu, birmingham city]\n",
        encoding="utf-8",
    )
    configured = load_guard(TextSettings(guard_vocabulary_file=path))
    assert configured.check(question, faq).ok
    # the bundled aliases are still there
    assert configured.facets("chương trình liên kết")["programme"] == {"liên kết quốc tế"}


def test_override_can_add_a_category_and_drop_one(tmp_path: Path) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text(
        "categories:\n"
        "  year: null\n"
        "  number: null\n"
        "  dormitory:\n"
        "    policy: {mode: overlap}\n"
        "    values:\n"
        "      Khu A: [khu a, ký túc xá khu a]\n"
        "      Khu B: [khu b, ký túc xá khu b]\n",
        encoding="utf-8",
    )
    configured = load_guard(TextSettings(guard_vocabulary_file=path))
    assert configured.check("Học phí 2024?", "Học phí 2025?").ok
    assert not configured.check("Giá phòng ktx khu A?", "Giá phòng ký túc xá khu B?").ok


def test_bad_pattern_in_override_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "guard.yaml"
    path.write_text("categories:\n  year:\n    patterns: ['(unclosed']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="year"):
        load_guard(TextSettings(guard_vocabulary_file=path))


def test_values_the_passages_never_mention_are_reported(guard: NearMissGuard) -> None:
    passages = ["Học phí năm học 2025-2026 là 32.000.000 đồng.", "Hạn nộp hồ sơ: 15/10/2025."]
    scope = ("year", "institution")
    assert guard.missing_from("Học phí năm 2025 bao nhiêu?", passages, scope) == {}
    assert guard.missing_from("Học phí năm 2027 bao nhiêu?", passages, scope) == {
        "year": frozenset({"2027"})
    }
    assert set(guard.missing_from("hoc phi bach khoa 2025", passages, scope)) == {"institution"}
    # a category left out of the scope is not checked; a question naming nothing passes
    assert guard.missing_from("Học phí năm 2027?", passages, ("institution",)) == {}
    assert guard.missing_from("Học phí bao nhiêu?", passages, scope) == {}
    # passages that name no year at all do not contradict one (a law cited by its year)
    undated = ["Người từ đủ 16 tuổi trở lên phải chịu trách nhiệm hình sự."]
    assert guard.missing_from("Theo Bộ luật Hình sự 2017, bao nhiêu tuổi?", undated, scope) == {}


# -- asked slots said by the entry (2/6) -------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "faq", "answer", "missing"),
    [
        # the held-out failures the issue quotes: the entry simply does not say what is asked
        (
            "Điểm chuẩn xét tuyển bằng HSA ngành CNTT 2025",
            "Điểm chuẩn ngành CNTT năm 2025 là bao nhiêu?",
            "Điểm chuẩn THPT ngành Công nghệ Thông tin năm 2025 là 27,5 điểm.",
            "method",
        ),
        (
            "Học phí hệ vừa làm vừa học",
            "Hệ vừa làm vừa học tuyển sinh như thế nào?",
            "Hệ vừa làm vừa học xét tuyển theo học bạ, học vào buổi tối và cuối tuần.",
            "attribute",
        ),
        (
            "Chỉ tiêu hệ từ xa",
            "Đào tạo từ xa là gì?",
            "Đào tạo từ xa là hình thức học trực tuyến có hướng dẫn.",
            "attribute",
        ),
        # every asked attribute, not one of them
        (
            "Học phí học cải thiện được tính theo loại tín chỉ học phí nào?",
            "Học cải thiện điểm thì điểm của lần học nào được dùng để tính điểm trung bình?",
            "Số tín chỉ học cải thiện được tính vào tổng số tín chỉ đăng ký của học kỳ đó.",
            "attribute",
        ),
        # a regulation topic the entry never mentions
        (
            "Muốn phúc khảo điểm khóa luận tốt nghiệp thì đăng ký ở đâu?",
            "Muốn phúc khảo bài thi thì đăng ký ở đâu và trong thời hạn nào?",
            "Sinh viên nộp đơn phúc khảo tại phòng Đào tạo trong 5 ngày sau khi công bố điểm.",
            "topic",
        ),
    ],
)
def test_an_entry_that_never_says_what_is_asked_is_refused(
    guard: NearMissGuard, query: str, faq: str, answer: str, missing: str
) -> None:
    assert guard.check(query, faq).ok  # the question alone had nothing to object to...
    verdict = guard.check(query, faq, answer)  # ...the entry as a whole does
    assert not verdict.ok
    assert missing in {m.category for m in verdict.missing}
    assert "nhưng mục này không nói về" in verdict.staff_reason


@pytest.mark.parametrize(
    ("query", "faq", "answer"),
    [
        # the major is not in the entry's question, but its answer gives that major's fee
        (
            "hoc phi nganh cntt bn v ad",
            "Học phí chương trình chuẩn năm học 2026–2027 là bao nhiêu?",
            "Học phí chương trình chuẩn là 32.500.000 đồng/năm cho các ngành KHMT, CNTT, ATTT.",
        ),
        # "bao nhiêu tiền" is answered by an amount, "sđt" by a phone number
        (
            "ktx bn tien 1 thang vay",
            "Giá phòng ký túc xá bao nhiêu một tháng?",
            "KTX B có giá 850.000 đồng/người/tháng.",
        ),
        (
            "sdt phong tuyen sinh la gi",
            "Thông tin về phòng tuyển sinh của trường?",
            "Phòng tuyển sinh: tầng 1 nhà A, hotline 028 3999 1234.",
        ),
        # synonyms of one regulation topic
        (
            "bị đuổi học khi nào",
            "Những trường hợp nào sinh viên bị buộc thôi học?",
            "Sinh viên bị buộc thôi học khi bị cảnh báo học vụ hai lần liên tiếp.",
        ),
        # "bao nhiêu tiền" asks for an amount: the tuition entry is one
        (
            "liên thông đóng bn tiền 1 năm v ad",
            "Học phí chương trình liên thông đại học ngành CNTT năm 2025 là bao nhiêu?",
            "Học phí năm học 2025-2026 là 40.000.000 đồng.",
        ),
        # a formula answers "tính ra sao"; "điểm đánh giá" is not "điểm danh" (attendance)
        (
            "Xét bằng điểm đánh giá năng lực thì điểm xét tuyển tính ra sao?",
            "Điểm xét tuyển theo phương thức đánh giá năng lực được tính như thế nào?",
            "Điểm xét tuyển = Điểm thi ĐGNL + Điểm ưu tiên (nếu có), thang điểm 1200.",
        ),
        # an entry naming no year stands for every year
        (
            "Học phí ngành KHMT năm 2027?",
            "Học phí ngành Khoa học máy tính là bao nhiêu?",
            "Học phí ngành Khoa học máy tính là 32.500.000 đồng/năm.",
        ),
    ],
)
def test_an_entry_that_says_what_is_asked_passes(
    guard: NearMissGuard, query: str, faq: str, answer: str
) -> None:
    verdict = guard.check(query, faq, answer)
    assert verdict.ok, verdict.reason


def test_an_entry_whose_answer_names_another_year_is_refused(guard: NearMissGuard) -> None:
    verdict = guard.check(
        "Học phí ngành KHMT năm 2027?",
        "Học phí ngành Khoa học máy tính là bao nhiêu?",
        "Năm học 2025–2026 học phí ngành Khoa học máy tính là 30.000.000 đồng.",
    )
    assert [m.category for m in verdict.missing] == ["year"]


def test_a_category_with_an_unknown_kind_is_a_config_error(tmp_path: Path) -> None:
    override = tmp_path / "guard.yaml"
    override.write_text(
        "categories:\n  attribute:\n    values:\n      học phí: {kinds: [salary]}\n", "utf-8"
    )
    with pytest.raises(ConfigError, match="unknown kinds"):
        load_guard(TextSettings(guard_vocabulary_file=override))


def test_an_amount_asked_of_a_deadline_entry_is_still_a_conflict(guard: NearMissGuard) -> None:
    verdict = guard.check(
        "học bổng BCU bao nhiêu tiền",
        "Hạn đăng ký học bổng chương trình BCU khóa 2024 là khi nào?",
        "Hạn đăng ký là ngày 15/8/2024.",
    )
    assert _categories(verdict) == {"attribute"}
