"""``tuvan faq import|export`` with an Excel workbook, as staff run them: the installed command
in a subprocess, its own embedded PostgreSQL in a temporary data dir."""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook, load_workbook

from bot.knowledge.faq_files import CSV_FIELDS
from tests.bot.cli._support import ok, stored_faq, tuvan

# Every column the CSV carries, each row filled in as the export writes it back.
ROWS: list[dict[str, str]] = [
    {
        "id": "ktx-2026",
        "question": "Ký túc xá có đủ chỗ cho tân sinh viên năm 2026 không?",
        "answer": (
            "Ký túc xá khu A có 1.200 chỗ, ưu tiên:\n"
            "- tân sinh viên ở tỉnh xa;\n"
            "- con em gia đình chính sách.\n\n"
            "Đăng ký trực tuyến trước ngày 15/8."
        ),
        "source": "Sổ tay tân sinh viên 2026",
        "source_url": "https://tuyensinh.example.edu.vn/ky-tuc-xa",
        "language": "vi",
        "status": "published",
        "variants": "ktx con cho ko | chỗ ở ký túc xá cho tân sinh viên",
    },
    {
        "id": "tuition-intl",
        "question": "What is the tuition fee for international students?",
        "answer": "2,400 USD per year for undergraduate programmes taught in English.",
        "source": "",
        "source_url": "",
        "language": "en",
        "status": "published",
        "variants": "",
    },
    {
        "id": "nhap-hoc-dot-2",
        "question": "Khi nào công bố lịch nhập học đợt 2?",
        "answer": "Lịch nhập học đợt 2 sẽ được công bố trên trang tuyển sinh.",
        "source": "",
        "source_url": "",
        "language": "vi",
        "status": "draft",
        "variants": "nhap hoc dot 2",
    },
]


def workbook_rows(path: Path) -> list[dict[str, str]]:
    sheet = load_workbook(path).worksheets[0]
    header, *rows = [[v or "" for v in values] for values in sheet.iter_rows(values_only=True)]
    assert header == CSV_FIELDS
    return [dict(zip(header, row, strict=True)) for row in rows]


def by_id(rows: list[dict[str, str]]) -> dict[str, dict[str, object]]:
    # the order of an entry's phrasings is the database's: compared as a set
    return {r["id"]: {**r, "variants": set(r["variants"].split(" | ")) - {""}} for r in rows}


def test_an_xlsx_faq_round_trips_through_import_and_export_unchanged(tmp_path: Path) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(CSV_FIELDS)
    for row in ROWS:
        sheet.append([row[name] or None for name in CSV_FIELDS])
    source = tmp_path / "faq-tuyen-sinh.xlsx"
    book.save(source)

    first = tmp_path / "first"
    imported = ok(tuvan("faq", "import", str(source), data_dir=first, cwd=tmp_path))
    assert f"imported 3 FAQ entries from {source}" in imported.stdout
    # the same self-check as after any import; the draft answers nobody yet
    summary = imported.stdout.strip().splitlines()[-1]
    assert summary.startswith("self-check: 2 entries, 4 phrasings;"), summary
    assert summary.endswith("(details: tuvan faq check)")

    exported = tmp_path / "export.xlsx"
    result = ok(tuvan("faq", "export", str(exported), data_dir=first, cwd=tmp_path))
    assert f"exported 3 FAQ entries to {exported}" in result.stdout
    assert by_id(workbook_rows(exported)) == by_id(ROWS)

    again = tmp_path / "again"
    ok(tuvan("faq", "import", str(exported), data_dir=again, cwd=tmp_path))
    stored = stored_faq(first)
    assert stored_faq(again) == stored
    assert [row[0] for row in stored] == sorted(r["id"] for r in ROWS)
    assert {row[0]: row[2] for row in stored}["ktx-2026"] == ROWS[0]["answer"]  # line breaks kept


def test_a_broken_workbook_is_a_message_and_exit_1_with_nothing_started(tmp_path: Path) -> None:
    source = tmp_path / "faq.xlsx"
    source.write_bytes(b"PK\x03\x04 saved halfway")
    result = tuvan("faq", "import", str(source), data_dir=tmp_path / "data", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{source} is not a readable Excel workbook (.xlsx)" in result.stderr
    assert not (tmp_path / "data").exists()
