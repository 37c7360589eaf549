"""Tier 2's answers through the real answerer, as a student reads them: a PDF notice quoted in
whole sentences and numbers, without its letterhead, page furniture or running header; a
question in parts answered under headings that name what each part asks."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.documents import DocumentsTier
from bot.answer.found import Found
from bot.answer.parts import AnswererParts
from bot.answer.read import Read, with_entities
from bot.answer.reading import read_question
from bot.knowledge.ingest import ingest_paths
from retrieval.faq.decision import FaqDecision
from retrieval.guard.checks import NearMissGuard
from retrieval.index.indexer import Indexer
from retrieval.query import PreparedQuery, QueryPart
from retrieval.search.hits import Hit
from retrieval.text.language import detect_language
from retrieval.thresholds import Thresholds
from tests.bot.answer._support import ingest_text

RUNNING = "<p>Thông báo xét tuyển bổ sung năm 2026</p>"
LETTERHEAD = (
    "<p>BỘ GIÁO DỤC VÀ ĐÀO TẠO</p><p>CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM</p>"
    "<p>TRƯỜNG ĐẠI HỌC CÔNG NGHỆ SÔNG HỒNG</p><p>Độc lập - Tự do - Hạnh phúc</p>"
    "<p>Số: 123/TB-ĐHCN</p><p>TP. Hồ Chí Minh, ngày 10 tháng 6 năm 2026</p>"
)
# The fee's line breaks after "60." as a PDF's layout may; the sentence after it runs on.
PAGES = [
    RUNNING
    + LETTERHEAD
    + "<p>THÔNG BÁO</p><p>Trường thông báo xét tuyển bổ sung đợt tháng 8 năm 2026 cho các"
    "<br>ngành còn chỉ tiêu.</p><p>Lệ phí xét tuyển bổ sung: 60.<br>000 đ/hồ sơ, thí sinh nộp"
    "<br>trực tuyến khi đăng ký.</p><p>Trang 1/3</p>",
    RUNNING + "<p>Hồ sơ xét tuyển bổ sung nộp trực tuyến từ ngày 01/8/2026.</p><p>Trang 2/3</p>",
    RUNNING + "<p>Kết quả được công bố trên cổng tuyển sinh.</p><p>Trang 3/3</p>",
]


def notice(path: Path) -> Path:
    pdf = pymupdf.open()
    for html in PAGES:
        page = pdf.new_page()
        page.insert_htmlbox(pymupdf.Rect(50, 50, 545, 790), html)
    pdf.save(path)
    pdf.close()
    return path


def body(answer: str) -> str:
    """The answer without its sources and disclaimer (after its first blank line)."""
    return answer.split("\n\n")[0]


async def test_a_pdf_notice_is_quoted_in_whole_numbers_without_its_furniture(
    answerer: Answerer,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    await ingest_paths(sessionmaker, indexer, [notice(tmp_path / "xet-tuyen-bo-sung.pdf")])

    result = await answerer.answer("Lệ phí xét tuyển bổ sung năm 2026 là bao nhiêu?")

    assert result.tier == "documents", result.reason
    text = body(result.answer)
    assert "Lệ phí xét tuyển bổ sung: 60.000 đ/hồ sơ, thí sinh nộp trực tuyến khi đăng ký." in text
    for furniture in ("CỘNG HÒA", "Độc lập", "Số: 123", "ngày 10 tháng 6", "Trang 1", "BỘ GIÁO"):
        assert furniture not in text


async def test_a_question_in_parts_gets_headings_naming_what_each_part_asks(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("hoc phi chuong trinh chuan nam 2026 bn, ktx dang ky o dau")
    assert result.tier == "documents", result.reason
    text = body(result.answer)
    assert "\nHọc phí:\n- " in text
    assert "\nKý túc xá, địa điểm:\n- " in text
    assert "hoc phi" not in text.lower()
    assert "ktx dang ky" not in text.lower()
    assert "chưa tìm thấy thông tin" not in text


# -- a question in parts, composed from given passages ----------------------------------------


def passage(text: str, n: int = 1) -> Hit:
    return Hit(
        chunk_id=n,
        document_id=n,
        text=text,
        heading_path="",
        page=None,
        ordinal=0,
        external_id=None,
        title="Tuyển sinh 2026",
        source=f"doc{n}.md",
        url=None,
        similarity=0.9,
        score=1.0,
    )


def in_parts(parts: AnswererParts, question: str, *texts: str) -> str:
    """The answer of tier 2 to ``question`` read in its comma-separated parts, over ``texts``."""
    asked = [p.strip() for p in question.split(",")]
    hits = [passage(text, n) for n, text in enumerate(texts, start=1)]
    terms = tuple(parts.processor.query_terms(question))
    prepared = PreparedQuery(
        question, None, question, terms, tuple(QueryPart(p, p, ()) for p in asked)
    )
    read = Read(question, question, detect_language(question))
    found = Found(
        question=question,
        language=detect_language(question),
        terms=parts.processor.query_terms(question),
        thresholds=Thresholds(0.5, "default"),
        decision=FaqDecision(None, (), "no FAQ"),
        hits=hits,
        trace={},
        scores={},
        passing=hits,
        parts=tuple((p, p) for p in asked),
        read=read.with_restored(prepared, parts.guard, parts.processor),
    )
    answer = DocumentsTier(parts).extractive(found)
    assert answer is not None
    return body(answer.answer)


FEES = "Học phí ngành Khoa học Máy tính năm 2026 là 32.500.000 đồng/năm, chỉ tiêu là 240."


def test_a_part_answered_by_a_quote_of_another_part_adds_nothing(parts: AnswererParts) -> None:
    text = in_parts(parts, "học phí ngành KHMT 2026 bao nhiêu, chỉ tiêu bao nhiêu", FEES)
    assert text == f"Theo tài liệu tuyển sinh của trường:\nHọc phí:\n- {FEES} [1]"


def test_a_part_asking_no_kind_of_value_is_answered_by_a_quote_naming_it(
    parts: AnswererParts,
) -> None:
    # "tỉ lệ có việc làm cao không" asks no figure of its own: the jobs line says it
    jobs = (
        "An toàn Thông tin: tỷ lệ có việc làm là 95,5%; lương khởi điểm là 15,0 triệu đồng/tháng."
    )
    text = in_parts(
        parts, "lương khởi điểm ngành attt bao nhiêu, tỉ lệ có việc làm cao không", jobs
    )
    assert "95,5%" in text
    assert "chưa tìm thấy" not in text


def test_a_part_the_documents_do_not_answer_is_named_once_at_the_end(
    parts: AnswererParts,
) -> None:
    text = in_parts(parts, "học phí ngành KHMT 2026 bao nhiêu, ký túc xá ở đâu", FEES)
    assert text.endswith(
        f"- {FEES} [1]\nMình chưa tìm thấy thông tin về ký túc xá, địa điểm "
        "trong tài liệu của trường."
    )
    assert text.count("chưa tìm thấy thông tin") == 1


def test_an_english_question_in_parts_gets_no_vietnamese_headings(parts: AnswererParts) -> None:
    fees = "Tuition for Computer Science in 2026 is 32,500,000 VND per year."
    text = in_parts(parts, "what is the tuition for computer science, where is the dormitory", fees)
    assert text.splitlines()[1] == f"- {fees} [1]"
    assert text.endswith(
        "I did not find an answer to part of your question in the university's documents."
    )


def test_a_part_that_names_no_subject_is_read_with_the_question_s(parts: AnswererParts) -> None:
    # "có mấy loại" asks how many kinds of what the first part names: the scholarships; a part
    # naming its own subject, and a year, keep theirs.
    guard = parts.guard
    whole = "Trường có học bổng cho tân sinh viên không ạ? có mấy loại"
    assert named("có mấy loại", whole, guard) == "có mấy loại học bổng"
    whole = "điểm chuẩn thpt ngành ttnt 2025 bn, năm nay tuyển mấy chỉ tiêu ạ"
    assert named("năm nay tuyển mấy chỉ tiêu", whole, guard) == "năm nay tuyển mấy chỉ tiêu ttnt"
    assert named(
        "học bổng có mấy loại", "ngành ttnt có học bổng không, học bổng có mấy loại", guard
    ) == ("học bổng có mấy loại ttnt")


def test_a_part_takes_a_subject_said_before_it_and_none_after(parts: AnswererParts) -> None:
    guard = parts.guard
    # "phải đóng trước ngày nào" names nothing and asks only when: the fee's deadline
    whole = "học phí học kỳ đầu ngành khmt là bao nhiêu, phải đóng trước ngày nào ạ"
    assert named("phải đóng trước ngày nào ạ", whole, guard) == (
        "phải đóng trước ngày nào ạ học phí khmt"
    )
    # nor a method named after it: "học bạ" is the deadline's, not the conversion's
    whole = "ielts 6.5 thì quy đổi môn anh được mấy điểm, hạn nộp học bạ là ngày nào"
    assert named("ielts 6.5 thì quy đổi môn anh được mấy điểm", whole, guard) == (
        "ielts 6.5 thì quy đổi môn anh được mấy điểm"
    )
    # the deposit asked after it is no subject of the first part
    whole = "tiền phòng đóng theo tháng hay theo kỳ, có phải đặt cọc không"
    assert named("tiền phòng đóng theo tháng hay theo kỳ", whole, guard) == (
        "tiền phòng đóng theo tháng hay theo kỳ"
    )


def test_a_part_asking_of_the_school_takes_no_major(parts: AnswererParts) -> None:
    # the school's code is no major's: the major of the other part stays there
    guard = parts.guard
    whole = "mã trường SHUT là gì vậy, với ngành khmt thì mã xét tuyển là bao nhiêu"
    assert named("mã trường SHUT là gì vậy", whole, guard) == "mã trường SHUT là gì vậy"
    assert named("với ngành khmt thì mã xét tuyển là bao nhiêu", whole, guard) == (
        "với ngành khmt thì mã xét tuyển là bao nhiêu"
    )
    # a part asking something of a major still takes it
    whole = "ngành khmt học mấy năm, mã ngành là gì"
    assert named("mã ngành là gì", whole, guard) == "mã ngành là gì khmt"


async def test_a_dorm_s_price_and_its_deposit_are_both_answered(answerer: Answerer) -> None:
    # "đặt cọc" is asked of its own (not a fee): only the deposit's line answers that part
    result = await answerer.answer("ktx cơ sở 2 phòng 8 người bn 1 tháng, có phải đặt cọc ko")
    assert result.tier == "documents", result.reason
    assert "550.000" in result.answer
    assert "1.000.000" in result.answer


def named(part: str, whole: str, guard: NearMissGuard) -> str:
    """``part`` with the names ``whole`` gives it, each read once."""
    return with_entities(
        part, read_question(part, guard), whole, read_question(whole, guard), guard
    )


async def test_a_quoted_passage_names_the_year_its_document_speaks_of(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    await ingest_text(
        session,
        indexer,
        tmp_path / "ky-tuc-xa.md",
        "# Thông báo đăng ký ký túc xá\n\n"
        "Tân sinh viên khóa tuyển sinh năm 2025 đăng ký ở ký túc xá trên cổng thông tin sinh "
        "viên trong tuần nhập học. Giá phòng ký túc xá là 450.000 đồng mỗi tháng cho phòng tám "
        "người.\n",
    )
    result = await answerer.answer("Giá phòng ký túc xá mỗi tháng là bao nhiêu?")
    assert result.tier == "documents", result.answer
    assert "450.000 đồng" in result.answer
    assert "Thông báo đăng ký ký túc xá (năm 2025)" in result.answer
