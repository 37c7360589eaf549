"""CSV files written to tmp_path."""

from __future__ import annotations

from pathlib import Path

from retrieval.loading import load_file
from tests.retrieval._support import write

# --- CSV -------------------------------------------------------------------------------------


def test_csv_sections_repeat_the_header_and_hold_at_most_25_rows(tmp_path: Path) -> None:
    rows = "\n".join(f"{i};75{i:05d};Ngành {i};26.{i}" for i in range(1, 61))
    path = write(tmp_path / "diem_chuan-2024.csv", f"STT;Mã ngành;Tên ngành;Điểm\n{rows}\n")

    doc = load_file(path)

    assert doc.title == "Diem chuan 2024"
    assert doc.meta["delimiter"] == ";"
    assert len(doc.sections) == 3
    bodies = []
    for section in doc.sections:
        lines = section.text.split("\n")
        assert lines[:2] == ["| STT | Mã ngành | Tên ngành | Điểm |", "| --- | --- | --- | --- |"]
        assert len(lines) - 2 <= 25
        bodies.extend(lines[2:])
    assert bodies[0] == "| 1 | 7500001 | Ngành 1 | 26.1 |"
    assert len(bodies) == 60


def test_csv_caption_rows_start_tables_with_their_own_header(tmp_path: Path) -> None:
    text = (
        "\ufeff2024,,,\nSTT,Ngành,Điểm,\n1,CNTT,27.1,\n2,KHMT,27.3,\n"
        '2023,,,\nSTT,Ngành,Điểm,\n1,"CNTT, chất lượng cao",26.9,\n'
    )
    doc = load_file(write(tmp_path / "scores.csv", text))

    assert [s.heading_path for s in doc.sections] == [("2024",), ("2023",)]
    assert doc.sections[1].text == (
        "| STT | Ngành | Điểm |\n| --- | --- | --- |\n| 1 | CNTT, chất lượng cao | 26.9 |"
    )
