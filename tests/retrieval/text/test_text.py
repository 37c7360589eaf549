import re
import time
import unicodedata
from pathlib import Path

import pytest

from bot.core.errors import ConfigError
from bot.core.settings import TextSettings
from retrieval.text.folding import fold
from retrieval.text.language import detect_language
from retrieval.text.terms import TextProcessor, tokens, written_marks
from retrieval.text.vocabulary import load_text_processor

SAFE_TERM = re.compile(r"^[a-z0-9_]+$")


@pytest.fixture(scope="module")
def processor() -> TextProcessor:
    return load_text_processor()


def _norm(s: str) -> str:
    """norm() of the evaluation datasets' validate.py, copied verbatim."""
    s = unicodedata.normalize("NFD", s)
    s = "".join(c for c in s if unicodedata.category(c) != "Mn")
    s = s.replace("đ", "d").replace("Đ", "D").lower()
    return re.sub(r"\s+", " ", s).strip()


# -- fold ----------------------------------------------------------------------------------------


def test_fold_removes_diacritics_and_collapses_whitespace() -> None:
    assert fold("  Học phí\tngành  ĐÀO tạo\n") == "hoc phi nganh dao tao"


def test_a_times_sign_folds_to_the_x_a_keyboard_types() -> None:
    # "ảnh 3×4" in the documents is the student's "ảnh 3x4"
    assert fold("Ảnh chân dung 3×4") == fold("anh chan dung 3x4")
    assert tokens("4 ảnh 3×4") == tokens("4 anh 3x4")


@pytest.mark.parametrize(
    "text",
    [
        "Trường Đại học Công nghệ Thông tin – ĐHQG-HCM",
        "Ho\u0323c phi\u0301 (NFD input)",
        "İstanbul ǅ ﬁ Ⅻ ẞ Å ñ ç ø œ Ω ς",
        "हिन्दी ไทย 한국어 日本語 😀👍🏽 \u200b\x00\x07",
        "",
        "   ",
    ],
)
def test_fold_follows_the_dataset_norm_rules(text: str) -> None:
    assert fold(text) == _norm(text)


# -- language -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Học phí ngành Khoa học Máy tính là bao nhiêu?",
        "hoc phi nganh cntt bn v ad",
        "ad oi chi tieu nganh khmt nam 2025 bn vay",
        "diem chuan ktpm 2024",
        "uit o dau",
        "IELTS 6.5 được không",
        "chua co ielts co vao chuong trinh bcu duoc khong",
    ],
)
def test_vietnamese_is_detected_with_or_without_diacritics(text: str) -> None:
    assert detect_language(text) == "vi"


@pytest.mark.parametrize(
    "text",
    [
        "What is the tuition fee for Computer Science?",
        "How do I apply as an international student?",
        "SAT score requirements",
        "thank you",
        "What is the tuition at Trường Đại học Công nghệ Thông tin?",
    ],
)
def test_english_is_detected(text: str) -> None:
    assert detect_language(text) == "en"


@pytest.mark.parametrize("text", ["", "   ", "😀👍🏽", "ok", "123 456", "IELTS 6.5", "?!"])
def test_language_defaults_to_vietnamese_without_evidence(text: str) -> None:
    assert detect_language(text) == "vi"


# -- expand_query ---------------------------------------------------------------------------------


def test_chat_shorthand_is_written_out_for_the_embedder(processor: TextProcessor) -> None:
    assert processor.expand_query("có đc cộng điểm k ad") == "có được cộng điểm không anh/chị"
    assert (
        processor.expand_query("mk có ACT thì cần bn điểm") == "mình có ACT thì cần bao nhiêu điểm"
    )


def test_majors_are_written_in_full_and_other_words_keep_their_casing(
    processor: TextProcessor,
) -> None:
    assert (
        processor.expand_query("Học phí KHMT và cntt năm 2025?")
        == "Học phí Khoa học Máy tính và Công nghệ Thông tin năm 2025?"
    )


def test_abbreviations_are_expanded_only_as_standalone_words(processor: TextProcessor) -> None:
    text = "khóa K19, học phí 500k, e-learning, TP.HCM, kk, ktx.uit.edu.vn"
    assert processor.expand_query(text) == text


def test_v_means_vay_only_at_the_end_of_a_clause(processor: TextProcessor) -> None:
    assert processor.expand_query("khmt lấy bn điểm v ad") == (
        "Khoa học Máy tính lấy bao nhiêu điểm vậy anh/chị"
    )
    assert processor.expand_query("tính sao v?") == "tính sao vậy?"
    assert processor.expand_query("xét khối V không ạ") == "xét khối V không ạ"


@pytest.mark.parametrize(
    ("text", "written"),
    [
        # "đk" registers, unless a word beside it asks for requirements
        ("dk xet tuyen o dau", "đăng ký xet tuyen o dau"),
        ("cách đk ktx", "cách đăng ký ký túc xá"),
        ("xet hoc ba can dk j", "xet hoc ba can điều kiện gì"),
        ("du dk xet tuyen thang ko", "du điều kiện xet tuyen thang không"),
        ("đk để được học bổng là gì", "điều kiện để được học bổng là gì"),
    ],
)
def test_dk_is_a_requirement_next_to_words_asking_one(
    processor: TextProcessor, text: str, written: str
) -> None:
    assert processor.expand_query(text) == written


def test_thpt_stays_an_abbreviation_for_the_embedder(processor: TextProcessor) -> None:
    assert processor.expand_query("điểm thi thpt") == "điểm thi THPT"


def test_gpa_and_wifi_meet_the_words_pages_write(
    processor: TextProcessor,
) -> None:
    assert processor.expand_query("cần gpa bao nhiêu") == "cần GPA bao nhiêu"
    terms = set(processor.query_terms("can gpa bao nhieu"))
    assert {"gpa", "tich_luy"} <= terms  # "điểm trung bình tích lũy từ 2,80/4,00"
    assert processor.expand_query("đtb lớp 12 bn") == "điểm trung bình lớp 12 bao nhiêu"
    # pages write "Wi-Fi" ("wi", "fi"), students "wifi"
    assert {"wifi", "wi_fi"} <= set(processor.query_terms("ktx có wifi không"))


def test_capitalised_shorthand_gives_a_capitalised_expansion(processor: TextProcessor) -> None:
    assert processor.expand_query("Ko biết nữa") == "Không biết nữa"


def test_chat_shorthand_is_left_alone_in_english(processor: TextProcessor) -> None:
    assert processor.expand_query("Is the KHMT programme good, k?") == (
        "Is the Khoa học Máy tính programme good, k?"
    )


# -- keyword terms --------------------------------------------------------------------------------


def test_unaccented_abbreviated_question_meets_the_accented_document(
    processor: TextProcessor,
) -> None:
    query = processor.query_terms("hoc phi nganh khmt")
    document = set(processor.keyword_text("Học phí ngành Khoa học Máy tính").split())
    shared = set(query) & document
    assert {"hoc_phi", "khoa_hoc", "may_tinh", "nganh_khoa"} <= shared
    assert len(shared) >= 8


def test_question_words_are_not_query_terms(processor: TextProcessor) -> None:
    terms = processor.query_terms("Cho em hỏi học phí ngành CNTT là bao nhiêu ạ?")
    for word in ("cho", "em", "hoi", "la", "bao", "nhieu", "a", "cho_em", "bao_nhieu"):
        assert word not in terms
    assert {"hoc_phi", "cntt", "cong_nghe", "thong_tin"} <= set(terms)


def test_words_that_fold_like_a_stopword_survive_in_pairs(processor: TextProcessor) -> None:
    # "cơ" folds like "có" and "đa" like "dạ"; the pairs keep the topic.
    terms = processor.query_terms("học ở cơ sở nào, ngành đa phương tiện")
    assert {"co_so", "da_phuong"} <= set(terms)


def test_english_plurals_match_singulars(processor: TextProcessor) -> None:
    query = set(processor.query_terms("What are the tuition fees for Computer Science programs?"))
    document = set(processor.doc_terms("Tuition fee: Computer Science program"))
    assert {"tuition_fee", "computer_science", "program"} <= query & document
    assert "the" not in query


def test_numbers_and_codes_are_kept_matchable(processor: TextProcessor) -> None:
    terms = processor.keyword_text(
        "Mã ngành 7480101, tổ hợp A00, D01; điểm chuẩn 28,50 năm 2025; học phí 40.000.000 đồng"
    ).split()
    assert {"7480101", "a00", "d01", "28_5", "2025", "40000000"} <= set(terms)
    assert "28_5" in processor.query_terms("diem chuan 28.5")


def test_doc_terms_are_the_keyword_text_words(processor: TextProcessor) -> None:
    text = "Ngành KHMT (mã 7480101) tuyển 280 chỉ tiêu."
    assert processor.doc_terms(text) == processor.keyword_text(text).split()


def test_query_terms_are_distinct(processor: TextProcessor) -> None:
    terms = processor.query_terms("học phí học phí học phí khmt khmt")
    assert len(terms) == len(set(terms))


@pytest.mark.parametrize(
    "text",
    [
        "'; DROP TABLE chunks; -- <script>alert(1)</script>",
        "a & !b | c:* <-> d ('e' | \"f\")",
        "\x00\x1b[31m control \x7f chars \u200b\u200e\u202e",
        "emoji 😀👍🏽🇻🇳 and 中文 and עברית",
        "Ho\u0323c phi\u0301 NFD",
        "____ ---- .... ,,,,",
    ],
)
def test_terms_only_use_the_tsquery_safe_charset(processor: TextProcessor, text: str) -> None:
    for terms in (processor.query_terms(text), processor.keyword_text(text).split()):
        assert all(SAFE_TERM.match(t) for t in terms), terms


def test_100_kb_input_is_processed_quickly(processor: TextProcessor) -> None:
    text = ("Học phí ngành KHMT năm 2025 là 40.000.000 đồng; xét A00, D01. 😀 <b>x</b>\n" * 1500)[
        :100_000
    ]
    started = time.perf_counter()
    keyword_text = processor.keyword_text(text)
    terms = processor.query_terms(text)
    expanded = processor.expand_query(text)
    assert time.perf_counter() - started < 2.0
    assert keyword_text
    assert terms
    assert expanded
    assert all(SAFE_TERM.match(t) for t in keyword_text.split())


def test_query_terms_take_under_5_ms(processor: TextProcessor) -> None:
    question = "ad ơi cho em hỏi học phí ngành khmt năm 2025 bn v ạ"
    processor.query_terms(question)
    started = time.perf_counter()
    for _ in range(100):
        processor.query_terms(question)
    assert (time.perf_counter() - started) / 100 < 0.005


# -- loading --------------------------------------------------------------------------------------


def test_override_file_adds_and_removes_abbreviations(tmp_path: Path) -> None:
    path = tmp_path / "abbr.yaml"
    path.write_text(
        "domain:\n  bcu: Birmingham City University\nchat:\n  ko: null\n", encoding="utf-8"
    )
    processor = load_text_processor(TextSettings(abbreviations_file=path))
    assert processor.expand_query("học phí bcu ko") == "học phí Birmingham City University ko"
    assert {"birmingham", "city_university"} <= set(processor.query_terms("hoc phi bcu"))


def test_malformed_override_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "abbr.yaml"
    path.write_text("domain:\n  bcu: {spelled: wrong}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bcu"):
        load_text_processor(TextSettings(abbreviations_file=path))
    path.write_text("chat:\n  dk: {expand: đăng ký, second_near: [gi]}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="second_near"):
        load_text_processor(TextSettings(abbreviations_file=path))
    with pytest.raises(ConfigError, match="cannot read"):
        load_text_processor(TextSettings(abbreviations_file=tmp_path / "missing.yaml"))


ACUTE, GRAVE, DOT, CIRCUMFLEX = "\u0301", "\u0300", "\u0323", "\u0302"


@pytest.mark.parametrize(
    ("text", "term", "marks"),
    [
        # folding makes "máy" and "mấy", "động" and "đồng" one word; their marks do not
        ("máy chủ", "may", {ACUTE}),
        ("Trường có mấy cơ sở", "may", {ACUTE + CIRCUMFLEX}),
        ("vận động viên", "dong", {CIRCUMFLEX + DOT + "đ"}),
        ("10.000.000 đồng", "dong", {GRAVE + CIRCUMFLEX + "đ"}),
        # where the tone sits does not count, nor the spellings tokens make one
        ("hoà", "hoa", {GRAVE}),
        ("hòa", "hoa", {GRAVE}),
        ("học kì", "ky", {GRAVE}),
        ("học kỳ", "ky", {GRAVE}),
        # a word written without marks
        ("GPU cho AI", "gpu", {""}),
        ("may chu", "may", {""}),
    ],
)
def test_written_marks_keep_what_folding_loses(text: str, term: str, marks: set[str]) -> None:
    assert written_marks(text)[term] == marks
