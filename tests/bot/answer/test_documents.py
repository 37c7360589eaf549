"""Tier 2's answers through the real answerer, as a student reads them: a PDF notice quoted in
whole sentences and numbers, without its letterhead, page furniture or running header."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.knowledge.ingest import ingest_paths
from retrieval.index.indexer import Indexer

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
