"""The diacritic restorer (retrieval.restore) on real text: the demo knowledge base's documents
and FAQ, underthesea's lexicon and general text."""

from __future__ import annotations

import json
import re
import unicodedata
import zlib
from functools import lru_cache

import pytest

from bot.knowledge.demo import demo_kb_dir
from retrieval.restore.ngrams import NgramCounts, general_counts, has_marks
from retrieval.restore.restorer import DiacriticRestorer
from retrieval.text.folding import fold
from retrieval.text.vocabulary import load_text_processor


def demo_texts() -> list[str]:
    root = demo_kb_dir()
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "docs").glob("*.md"))]
    for line in (root / "faq.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts += [row["question"], row["answer"]]
    return texts


@lru_cache(maxsize=1)
def restorer() -> DiacriticRestorer:
    expansions = load_text_processor().dense_expansions
    return DiacriticRestorer(NgramCounts().add_texts(demo_texts()), expansions)


@pytest.mark.parametrize(
    ("typed", "restored"),
    [
        ("hoc phi chuong trinh chuan bao nhieu", "học phí chương trình chuẩn bao nhiêu"),
        ("ky tuc xa dang ky nhu the nao", "ký túc xá đăng ký như thế nào"),
        ("diem chuan nam 2025 la bao nhieu", "điểm chuẩn năm 2025 là bao nhiêu"),
        ("cho em hoi ho so nhap hoc gom nhung gi a", "cho em hỏi hồ sơ nhập học gồm những gì ạ"),
    ],
)
def test_unaccented_questions_get_their_marks_back(typed: str, restored: str) -> None:
    assert restorer().restore(typed).text == restored


def test_casing_punctuation_and_spacing_are_kept() -> None:
    result = restorer().restore("Hoc phi, HOC BONG?  Diem chuan!")
    assert result.text == "Học phí, HỌC BỔNG?  Điểm chuẩn!"
    assert result.changed == 6


def test_abbreviations_are_left_for_expansion_and_read_as_context() -> None:
    # "cntt" and "dc" are written out by retrieval.text; "v" reads as "vậy" for "ạ" after it.
    assert restorer().restore("hp nganh cntt bn v a").text == "hp ngành cntt bn v ạ"
    assert restorer().restore("dang ky dc khong").text == "đăng ký dc không"


def test_words_with_marks_numbers_and_unknown_words_stay_as_typed() -> None:
    text = "Ngành AI năm 2026 tuyen bao nhieu, email tuyensinh@shut.example.vn"
    assert restorer().restore(text).text == (
        "Ngành AI năm 2026 tuyển bao nhiêu, email tuyensinh@shut.example.vn"
    )


def test_decomposed_input_comes_back_composed() -> None:
    decomposed = unicodedata.normalize("NFD", "học phí ngành")
    assert restorer().restore(decomposed).text == "học phí ngành"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("hoc phi nganh cntt bn v ad", True),
        ("Học phí ngành CNTT là bao nhiêu?", False),
        ("hoc phí ngành cntt", False),  # mostly written with marks: its unmarked words are kept
        ("What is the tuition fee?", False),
        ("😀 ?", False),
    ],
)
def test_only_questions_typed_without_marks_need_restoring(question: str, expected: bool) -> None:
    assert restorer().needs_restoring(question) is expected


def test_clauses_typed_without_marks_teach_nothing() -> None:
    counts = NgramCounts().add_texts(["sdt phong tuyen sinh la j vay ad", "Phòng Tuyển sinh"])
    assert "phong" not in counts.unigrams
    assert counts.unigrams["phòng"] == 1


def test_the_knowledge_base_decides_between_forms_the_lexicon_allows() -> None:
    # "khoi" is "khởi" in most of the lexicon; a knowledge base of admission blocks says "khối".
    base = DiacriticRestorer(NgramCounts(), {})
    school = DiacriticRestorer(
        NgramCounts().add_texts(["Xét tuyển khối A00, khối A01 và khối D01."] * 3), {}
    )
    assert "khối" in base.forms("khoi")
    assert school.restore("xet tuyen khoi nao").text == "xét tuyển khối nào"


def test_counts_survive_serialisation() -> None:
    counts = NgramCounts().add_texts(demo_texts())
    again = NgramCounts.from_bytes(counts.to_bytes())
    assert again.unigrams == counts.unigrams
    assert again.bigrams == counts.bigrams
    copy = DiacriticRestorer(again, load_text_processor().dense_expansions)
    question = "hoc bong toan phan can dieu kien gi"
    assert copy.restore(question) == restorer().restore(question)


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format"):
        NgramCounts.from_bytes(zlib.compress(b'{"format": 99}'))


def test_general_vietnamese_is_loaded_from_underthesea() -> None:
    general = general_counts()
    assert len(general.unigrams) > 5000  # Viet74K's syllables and the VLSP sample
    assert general.unigrams["không"] > general.unigrams["khống"]


def test_demo_faq_questions_are_restored_to_at_least_95_percent_of_their_syllables() -> None:
    root = demo_kb_dir()
    questions = [
        json.loads(line)["question"]
        for path in (root / "faq.jsonl", root / "questions.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    expansions = restorer().expansions
    total = right = 0
    for question in questions:
        if not any(has_marks(w) for w in question.split()):
            continue
        restored = restorer().restore(fold(question)).text
        for want, got in zip(_words(question), _words(restored), strict=True):
            if fold(want) not in expansions:
                total += 1
                right += want == got
    assert total > 300
    assert right / total >= 0.95


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", unicodedata.normalize("NFC", text).lower())
