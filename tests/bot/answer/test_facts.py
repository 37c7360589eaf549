"""Exact answers from the facts tables of the demo knowledge base (bot.answer.facts), through
the whole answerer in a real PostgreSQL, as written and without diacritics."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer.answerer import Answerer
from bot.answer.replies import Answer
from bot.db.models import CatalogueRow
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer
from retrieval.text.folding import fold
from tests.bot.answer._support import ingest_text


def _facts(answer: Answer) -> str:
    assert answer.tier == "documents", answer.answer
    assert "facts" in answer.why, answer.reason
    return str(answer.why["facts"])


@pytest.mark.parametrize("folded", [False, True])
async def test_a_score_check_states_the_cutoff_its_year_and_the_comparison(
    answerer: Answerer, folded: bool
) -> None:
    question = "em được 25,5 điểm thi THPT có đỗ ngành Khoa học Dữ liệu không ad"
    result = await answerer.answer(fold(question) if folded else question)
    assert _facts(result) == "score check"
    line = next(x for x in result.answer.splitlines() if "Khoa học Dữ liệu" in x)
    assert "25,95" in line
    assert "thấp hơn 0,45 điểm" in line
    assert "năm 2025" in result.answer
    assert result.citations[0].title == "Điểm chuẩn năm 2025"
    assert "Điểm chuẩn năm 2026 chưa có trong dữ liệu của mình" in result.answer


async def test_a_score_check_lists_every_programme_the_question_leaves_open(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("25 diem thpt co do khmt k")
    assert _facts(result) == "score check"
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert len(lines) == 2
    assert "26,85" in lines[0]
    assert "thấp hơn 1,85" in lines[0]
    assert "chất lượng cao" in lines[1]
    assert "24,90" in lines[1]
    assert "cao hơn 0,1" in lines[1]


async def test_a_thousands_scale_score_is_checked_against_that_method_only(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("dgnl 900 co do cntt ko")
    assert _facts(result) == "score check"
    assert "880" in result.answer
    assert "cao hơn 20 điểm" in result.answer
    assert "25,90" not in result.answer  # the THPT cut-off is another scale


async def test_a_score_with_no_major_gets_no_verdict(answerer: Answerer) -> None:
    result = await answerer.answer("em được 25 điểm thì có đỗ không ạ")
    assert "facts" not in result.why
    assert "cao hơn" not in result.answer
    assert "thấp hơn" not in result.answer


async def test_a_dash_in_the_newest_table_answers_no(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    # On the demo the "—" is in 2025's cut-offs, older than its 2026 tables: this year's rule
    # is the documents' to quote.
    result = await answerer.answer("nganh ttnt co xet hoc ba khong")
    assert "facts" not in result.why
    assert "không áp dụng" in result.answer
    await ingest_text(
        session,
        indexer,
        tmp_path / "diem-chuan-2027.md",
        "# Điểm chuẩn năm 2027\n\n| Ngành | Mã ngành | THPT | Học bạ |\n|---|---|---|---|\n"
        "| Trí tuệ Nhân tạo | 7480107 | 27,50 | — |\n",
    )
    result = await answerer.answer("nganh ttnt co xet hoc ba khong")
    assert _facts(result) == "whether"
    assert result.answer.startswith("Không, ngành Trí tuệ Nhân tạo không xét học bạ (năm 2027)")


async def test_a_combination_the_major_does_not_take_is_a_no_with_the_ones_it_does(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("Ngành Khoa học Dữ liệu có xét tổ hợp D01 không ạ?")
    assert _facts(result) == "whether"
    assert result.answer.startswith("Không, ngành Khoa học Dữ liệu không xét D01 (năm 2026)")
    assert "A00, A01, D07, D08" in result.answer


@pytest.mark.parametrize("folded", [False, True])
async def test_a_major_the_school_does_not_have_is_a_plain_no(
    answerer: Answerer, folded: bool
) -> None:
    question = "trường mình có ngành Kiến trúc không ạ"
    result = await answerer.answer(fold(question) if folded else question)
    assert _facts(result) == "no such major"
    named = "kien truc" if folded else "Kiến trúc"  # as the student wrote it
    assert f"chưa đào tạo ngành {named}." in result.answer
    assert "Có," not in result.answer


async def test_a_major_the_school_has_is_a_yes_with_its_code(answerer: Answerer) -> None:
    result = await answerer.answer("truong co nganh an toan thong tin ko")
    assert _facts(result) == "has major"
    assert result.answer.startswith("Có, trường đào tạo ngành An toàn Thông tin (mã 7480202)")


async def test_an_faq_entry_staff_wrote_about_the_value_is_quoted_before_the_table(
    answerer: Answerer,
) -> None:
    # Tier 1 weighed the Khoa học Máy tính quota entry and was not sure enough to answer
    # verbatim ("năm nay" for its "năm 2026"); tier 2 quotes it first, and the table does not
    # take its place.
    result = await answerer.answer("nganh khmt nam nay lay bao nhieu chi tieu vay ad")
    assert result.tier == "documents"
    assert "facts" not in result.why
    assert result.why["documents"]["faq_passage"] is not None


async def test_which_majors_take_a_combination(answerer: Answerer) -> None:
    result = await answerer.answer("những ngành nào xét tổ hợp D08")
    assert _facts(result) == "majors by combination"
    assert result.answer.startswith(
        "Các ngành xét tổ hợp D08: Khoa học Dữ liệu (mã 7460108) (2026) [1]."
    )


async def test_the_lowest_cutoff_is_given_for_each_method(answerer: Answerer) -> None:
    result = await answerer.answer("nganh nao diem chuan thap nhat")
    assert _facts(result) == "extreme"
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert lines == [
        "- Ngành Công nghệ Thông tin, chương trình chất lượng cao, "
        "phương thức thi tốt nghiệp THPT: 23,80 [1]",
        "- Ngành Công nghệ Thông tin, chương trình chất lượng cao, "
        "phương thức đánh giá năng lực: 800 [1]",
        "- Ngành Công nghệ Thông tin, chương trình chất lượng cao, phương thức học bạ: 26,10 [1]",
    ]


async def test_two_majors_are_compared_row_by_row(answerer: Answerer) -> None:
    result = await answerer.answer("cntt va khmt nganh nao chi tieu nhieu hon")
    assert _facts(result) == "comparison"
    first = next(x for x in result.answer.splitlines() if x.startswith("- 2026"))
    assert first == (
        "- 2026: Công nghệ Thông tin 300 [1], Khoa học Máy tính 240 [1]: "
        "Công nghệ Thông tin nhiều hơn."
    )


async def test_a_code_asked_beside_a_quota_is_given_and_a_fee_is_left_to_the_documents(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("ma nganh va chi tieu ktpm")
    assert _facts(result) == "chỉ tiêu"
    assert "Ngành Kỹ thuật Phần mềm (mã 7480103), 2026: 200 [1]" in result.answer
    result = await answerer.answer("hoc phi va chi tieu nganh ktpm")
    assert "facts" not in result.why  # the fee is no table's: tier 2 answers the whole


async def test_this_year_s_cutoff_not_yet_published_is_said_so_with_its_date(
    answerer: Answerer,
) -> None:
    # The demo's admission year is 2026 (its handbook's titles); its cut-offs are 2025's.
    result = await answerer.answer("điểm chuẩn năm nay ngành Khoa học Máy tính là bao nhiêu")
    assert _facts(result) == "điểm chuẩn"
    assert result.answer.startswith("Mình chưa có điểm chuẩn năm 2026; điểm chuẩn mới nhất")
    assert "2025: 26,85 [1]" in result.answer
    result = await answerer.answer("25 diem thpt co do khmt k")
    assert "Điểm chuẩn năm 2026 chưa có trong dữ liệu của mình" in result.answer
    assert "Điểm chuẩn năm 2026 sẽ được công bố trước 17h00 ngày 13/8/2026" in result.answer


async def test_a_fee_is_quoted_per_what_the_question_asks(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    # The demo's FAQ answers its majors' fees (its entry is quoted first); a new table's major
    # has none.
    result = await answerer.answer("hp clc ktpm 1 nam bn")
    assert "facts" not in result.why
    assert "58.000.000 đồng/năm" in result.answer
    await ingest_text(
        session,
        indexer,
        tmp_path / "hoc-phi-sinh-hoc.md",
        "# Học phí năm học 2026–2027 khối Sinh học\n\n"
        "| Chương trình | Ngành áp dụng | Học phí/năm | Học phí/tín chỉ |\n|---|---|---|---|\n"
        "| Chuẩn | Công nghệ sinh học, Kỹ thuật y sinh | 30.000.000 đồng | 850.000 đồng |\n",
    )
    result = await answerer.answer("hoc phi nganh cong nghe sinh hoc 1 nam bn")
    assert _facts(result) == "học phí"
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert lines == ["- Ngành Công nghệ sinh học, 2026: 30.000.000 đồng/năm [1]"]
    result = await answerer.answer("học phí ngành Công nghệ sinh học là bao nhiêu")
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert [x.split(": ")[1] for x in lines] == [
        "30.000.000 đồng/năm [1]",
        "850.000 đồng/tín chỉ [1]",
    ]


async def test_a_year_named_that_the_tables_lack_is_not_answered_with_another(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("điểm chuẩn 2026 ngành khmt dự kiến bn ạ")
    assert "facts" not in result.why
    assert "26,85" not in result.answer


async def test_a_programme_the_school_does_not_run_is_a_plain_no(answerer: Answerer) -> None:
    result = await answerer.answer("trường mình có hệ vừa làm vừa học không ạ")
    assert _facts(result) == "no such programme"
    assert result.answer.startswith(
        "Theo thông tin tuyển sinh mình có, trường chưa đào tạo hệ vừa làm vừa học."
    )
    assert "chất lượng cao" in result.answer
    # The documents speak of liên thông and văn bằng 2 ("văn bằng thứ hai"): not denied,
    # whatever the tables say; nor is a question that only names a programme.
    for question in (
        "trường có hệ liên thông không ạ",
        "trường có chương trình văn bằng thứ hai không",
        "vb2 nộp hồ sơ ở đâu v ạ, gửi bưu điện đc k",
    ):
        result = await answerer.answer(question)
        assert result.why.get("facts") != "no such programme", question


async def test_a_score_on_another_scale_than_the_cutoff_is_not_compared(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    await ingest_text(
        session,
        indexer,
        tmp_path / "diem-chuan-sinh-hoc.md",
        "# Điểm chuẩn năm 2025 khối Sinh học\n\n"
        "| Ngành | Mã ngành | THPT | HSA |\n|---|---|---|---|\n"
        "| Công nghệ sinh học | 7420201 | 22,50 | 95,40 |\n",
    )
    result = await answerer.answer("dgnl 900 co do nganh cong nghe sinh hoc khong")
    assert "facts" not in result.why  # an HSA cut-off of 95,40 says nothing of 900 points
    result = await answerer.answer("hsa 100 co do nganh cong nghe sinh hoc khong")
    assert _facts(result) == "score check"
    assert "95,40 [1], 100 cao hơn 4,6 điểm" in result.answer


async def test_the_catalogue_s_majors_keep_tier_1_from_quoting_another_major_s_entry(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    # Two majors the bundled vocabulary does not know, named by this school's table.
    await ingest_text(
        session,
        indexer,
        tmp_path / "chi-tieu-nong-lam.md",
        "# Chỉ tiêu tuyển sinh năm 2026 khối Nông lâm\n\n"
        "| Ngành | Mã ngành | Chỉ tiêu |\n|---|---|---|\n"
        "| Công nghệ thực phẩm | 7540101 | 120 |\n"
        "| Công nghệ chế biến lâm sản | 7549001 | 60 |\n",
    )
    await upsert_faq(
        session,
        indexer,
        FaqDraft(
            "Học phí ngành Công nghệ thực phẩm một năm là bao nhiêu?",
            "Học phí ngành Công nghệ thực phẩm năm học 2026–2027 là 24.500.000 đồng/năm.",
        ),
    )
    await session.commit()
    asked = await answerer.answer("Học phí ngành Công nghệ thực phẩm một năm là bao nhiêu?")
    assert asked.tier == "faq"
    for question in (
        "Học phí ngành Công nghệ chế biến lâm sản một năm là bao nhiêu?",
        "hoc phi nganh cong nghe che bien lam san 1 nam bao nhieu",
    ):
        result = await answerer.answer(question)
        assert "24.500.000" not in result.answer, question
    guard = answerer.parts.guard
    assert guard.facets("hp nganh cong nghe che bien lam san")["major"] == {
        "Công nghệ chế biến lâm sản"
    }


async def test_a_major_offered_only_outside_the_standard_programme_is_a_yes_that_says_so(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    await ingest_text(
        session,
        indexer,
        tmp_path / "vlvh.md",
        "# Thông báo tuyển sinh hệ vừa làm vừa học năm 2026\n\n"
        "| Ngành | Mã ngành | Chỉ tiêu |\n|---|---|---|\n| Kế toán | 7340301 | 80 |\n",
    )
    result = await answerer.answer("trường có ngành kế toán không ạ")
    assert _facts(result) == "has major"
    assert result.answer.startswith(
        "Có, trường đào tạo ngành Kế toán (mã 7340301), hệ vừa làm vừa học [1]."
    )
    result = await answerer.answer("hệ vừa làm vừa học có ngành kế toán không")
    assert result.answer.startswith("Có, trường đào tạo ngành Kế toán (mã 7340301) [1].")
    # the standard programme asked for: the tables do not list it there, so no yes from them
    result = await answerer.answer("trường có ngành kế toán hệ chính quy không")
    assert result.why.get("facts") != "has major"
    assert not result.answer.startswith("Có,")


async def test_a_cutoff_by_campus_is_given_for_the_campus_asked_or_for_each(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    await ingest_text(
        session,
        indexer,
        tmp_path / "diem-chuan-co-so.md",
        "# Điểm chuẩn năm 2025 theo cơ sở\n\n"
        "| Ngành | Mã ngành | Điểm chuẩn Hà Nội | Điểm chuẩn TP. HCM |\n|---|---|---|---|\n"
        "| Công nghệ sinh học | 7420201 | 24,10 | 22,60 |\n",
    )
    result = await answerer.answer("điểm chuẩn ngành công nghệ sinh học cơ sở tp hcm bao nhiêu")
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert lines == [
        "- Ngành Công nghệ sinh học (mã 7420201), cơ sở TP. Hồ Chí Minh, 2025: 22,60 [1]"
    ]
    # no campus named: each campus's, never one picked
    result = await answerer.answer("em được 23 điểm có đỗ ngành công nghệ sinh học không")
    assert _facts(result) == "score check"
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert len(lines) == 2
    assert "cơ sở Hà Nội: điểm chuẩn 24,10 [1], 23 thấp hơn 1,1 điểm" in lines[0]
    assert "cơ sở TP. Hồ Chí Minh: điểm chuẩn 22,60 [1], 23 cao hơn 0,4 điểm" in lines[1]


async def test_campus_names_staff_add_are_read_in_questions_and_in_the_next_tables(
    answerer: Answerer, session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    session.add_all(
        [
            CatalogueRow(kind="campus", name="Hà Nội", aliases=["BVH"], origin="staff"),
            CatalogueRow(kind="campus", name="TP. Hồ Chí Minh", aliases=["BVS"], origin="staff"),
        ]
    )
    await session.flush()
    await answerer.answer("trường có mấy cơ sở")  # the serving process reads the catalogue
    guard = answerer.parts.guard
    assert guard.facets("điểm chuẩn cơ sở bvs")["campus"] == {"TP. Hồ Chí Minh"}
    # the serving processes read an uploaded table with the guard they answer with
    await ingest_text(
        session,
        dataclasses.replace(indexer, guard=guard),
        tmp_path / "chi-tieu-vlvh.md",
        "# Chỉ tiêu năm 2026\n\n| Ngành | Mã ngành | Chỉ tiêu BVH | Chỉ tiêu BVS |\n"
        "|---|---|---|---|\n| Công nghệ sinh học | 7420201 | 100 | 50 |\n",
    )
    result = await answerer.answer("chỉ tiêu ngành công nghệ sinh học ở BVS là bao nhiêu")
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert lines == ["- Ngành Công nghệ sinh học (mã 7420201), cơ sở TP. Hồ Chí Minh, 2026: 50 [1]"]


@pytest.mark.parametrize("folded", [False, True])
async def test_a_question_whose_every_part_asks_a_table_value_is_answered_part_by_part(
    answerer: Answerer, folded: bool
) -> None:
    # The second part names no major: it takes the first part's ("năm nay": this year's quota).
    question = "điểm chuẩn thpt ngành ttnt 2025 bn, năm nay tuyển mấy chỉ tiêu ạ"
    result = await answerer.answer(fold(question) if folded else question)
    assert _facts(result) == "điểm chuẩn; chỉ tiêu"
    assert "phương thức thi tốt nghiệp THPT, 2025: 27,10 [1]" in result.answer
    assert "Ngành Trí tuệ Nhân tạo (mã 7480107), 2026: 100 [2]" in result.answer
    cited = [Path(c.source).name for c in result.citations]
    assert cited == ["diem-chuan-2025.md", "nganh-dao-tao-2026.md"]


async def test_a_part_the_tables_do_not_hold_leaves_the_whole_question_to_the_documents(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("hp 1 kì ngành attt bn, hạn nộp hp kì 1 là ngày nào ạ")
    assert "facts" not in result.why
    assert result.tier == "documents"
    # the deadline part leads with the deadline, not with a fee line of "năm học 2026–2027"
    deadline = result.answer.split("Hạn nộp, học phí:")[1]
    assert deadline.lstrip("\n- ").startswith("Nộp qua cổng thanh toán")
    assert "chậm nhất ngày 28/8/2026" in deadline
