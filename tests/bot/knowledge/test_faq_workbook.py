"""FAQ workbooks: .xlsx files made with openpyxl as an admissions office would make them, read
as FAQ entries; the FAQ written as a workbook and read back; broken workbooks are clear errors."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook

from bot.core.errors import FaqFileError
from bot.db.models import FaqEntry, FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.faq_files import CSV_FIELDS, parse_faq_bytes, read_faq_file, write_faq_file
from bot.knowledge.faq_workbook import MAX_UNPACKED_BYTES


def office_workbook() -> Workbook:
    """The FAQ as staff keep it: a hidden notes sheet first, columns in their own order and
    capitalised, a column of their own, a blank row, an id typed as a number."""
    book = Workbook()
    notes = book.active
    assert notes is not None
    notes.title = "Ghi chú"
    notes.append(["Bảng này không phải FAQ"])
    notes.sheet_state = "hidden"
    sheet = book.create_sheet("Câu hỏi thường gặp")
    sheet.append(["Question", "Answer", " ID ", "Ghi chú nội bộ", "Variants", "Status"])
    sheet.append([])
    sheet.append(
        [
            "Học phí ngành Công nghệ thông tin năm 2026 là bao nhiêu?",
            "32.500.000 đồng mỗi năm.\nĐóng theo từng học kỳ, trước ngày 15/9.",
            101,
            "hỏi lại phòng Tài chính",
            "hoc phi cntt | học phí CNTT bao nhiêu",
            None,
        ]
    )
    sheet.append(["Khi nào công bố điểm chuẩn?", "Dự kiến ngày 20/8.", None, None, None, "draft"])
    return book


def saved(book: Workbook) -> bytes:
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_an_office_workbook_is_read_by_its_header_names(tmp_path: Path) -> None:
    path = tmp_path / "faq.xlsx"
    path.write_bytes(saved(office_workbook()))
    first, second = read_faq_file(path)
    assert first.external_id == "101"  # as Excel shows it, not "101.0"
    assert first.question == "Học phí ngành Công nghệ thông tin năm 2026 là bao nhiêu?"
    assert first.answer == "32.500.000 đồng mỗi năm.\nĐóng theo từng học kỳ, trước ngày 15/9."
    assert first.variants == ["hoc phi cntt", "học phí CNTT bao nhiêu"]
    assert first.status is FaqStatus.published
    assert (second.external_id, second.status, second.variants) == (None, FaqStatus.draft, [])


def entry(external_id: str, answer: str, **columns: str) -> FaqEntry:
    return FaqEntry(
        external_id=external_id,
        question=columns.pop("question", f"Câu hỏi {external_id}?"),
        answer=answer,
        status=FaqStatus(columns.pop("status", "published")),
        variants=[
            FaqVariant(text="hoc phi cntt", origin=VariantOrigin.staff),
            FaqVariant(text="học phí | CNTT", origin=VariantOrigin.generated),
        ],
        **columns,
    )


def test_the_faq_written_as_a_workbook_reads_back_every_column(tmp_path: Path) -> None:
    entries = [
        entry(
            "hp-cntt",
            "Học phí: 32.500.000 đồng/năm.\n\n- Học kỳ 1: 16.250.000 đồng\n- Học kỳ 2: như trên",
            question="Học phí ngành CNTT là bao nhiêu?",
            source="hoc-phi-2026.md",
            source_url="https://tuyensinh.example.edu.vn/hoc-phi",
            language="vi",
            status="draft",
        ),
        # openpyxl stores a text starting with "=" as a formula, which reads back empty
        entry("cong-thuc", "=Tổng học phí 4 năm: 130.000.000 đồng", language="vi"),
        entry("so", "7480201", question="0123"),  # text that looks like numbers stays text
    ]
    path = tmp_path / "faq.xlsx"
    assert write_faq_file(path, entries) == 3
    drafts = read_faq_file(path)
    assert [
        (d.external_id, d.question, d.answer, d.source, d.source_url, d.language, d.status)
        for d in drafts
    ] == [
        (e.external_id, e.question, e.answer, e.source, e.source_url, e.language, e.status)
        for e in entries
    ]
    assert [d.variants for d in drafts] == [["hoc phi cntt"]] * 3  # generated ones stay behind

    book = load_workbook(path)
    sheet = book.active
    assert sheet is not None
    assert [c.value for c in sheet[1]] == CSV_FIELDS  # the CSV's columns
    assert sheet.freeze_panes == "A2"
    assert {c.data_type for row in sheet.iter_rows(min_row=2) for c in row if c.value} == {"s"}


def test_control_characters_a_workbook_cannot_hold_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "faq.xlsx"
    write_faq_file(path, [entry("ff", "Trang 1\x0cTrang 2\x00")])
    [draft] = read_faq_file(path)
    assert draft.answer == "Trang 1Trang 2"


def test_an_answer_longer_than_an_excel_cell_is_refused_naming_its_entry(tmp_path: Path) -> None:
    with pytest.raises(FaqFileError, match="entry dai: its answer has 40,000 characters"):
        write_faq_file(tmp_path / "faq.xlsx", [entry("dai", "a" * 40_000)])
    assert not (tmp_path / "faq.xlsx").exists()


def _rezipped(raw: bytes, change: Callable[[str, bytes], bytes | None]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as whole, zipfile.ZipFile(out, "w") as changed:
        for name in whole.namelist():
            data = change(name, whole.read(name))
            if data is not None:
                changed.writestr(name, data)
    return out.getvalue()


def _sheet_cut(name: str, data: bytes) -> bytes:
    return data[: len(data) // 2] if name.endswith("sheet2.xml") else data


def _no_workbook_part(name: str, data: bytes) -> bytes | None:
    return None if name == "xl/workbook.xml" else data


def _bomb() -> bytes:
    # a few dozen kilobytes that unpack past the limit
    out = io.BytesIO(_good())
    with zipfile.ZipFile(out, "a", compression=zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("xl/media/padding.bin", b"\0" * (MAX_UNPACKED_BYTES + 1))
    return out.getvalue()


def _headerless() -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Câu hỏi", "Trả lời"])
    sheet.append(["Học phí?", "32.500.000 đồng"])
    return saved(book)


def _good() -> bytes:
    return saved(office_workbook())


UNREADABLE = "is not a readable Excel workbook"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: b"", UNREADABLE),
        (lambda: b"PK\x03\x04 not really a zip", UNREADABLE),
        (lambda: _good()[: len(_good()) // 2], UNREADABLE),
        (lambda: _rezipped(_good(), _sheet_cut), UNREADABLE),
        (lambda: _rezipped(_good(), _no_workbook_part), UNREADABLE),
        (_bomb, "unpacks to 50 MB, more than an FAQ holds"),
        (_headerless, "the first row of sheet 'Sheet' should name the columns"),
        (lambda: saved(Workbook()), "sheet 'Sheet' is empty"),
    ],
    ids=[
        "empty",
        "garbage",
        "truncated",
        "damaged-sheet",
        "no-workbook",
        "bomb",
        "header",
        "blank",
    ],
)
def test_a_broken_workbook_is_a_faq_file_error_naming_the_file(
    tmp_path: Path, make: Callable[[], bytes], message: str
) -> None:
    content = make()
    path = tmp_path / "faq.xlsx"
    path.write_bytes(content)
    with pytest.raises(FaqFileError, match=message) as caught:
        read_faq_file(path)
    assert str(path) in str(caught.value)
    with pytest.raises(FaqFileError, match=message):
        parse_faq_bytes(content, "upload.xlsx")
