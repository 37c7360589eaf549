"""`tuvan eval facts`: the cases file read and checked, each kind scored on real answers over a
small corpus with a cut-off table (a throwaway database on the test server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.group import cli
from bot.core.errors import DatasetError
from bot.evaluation.facts import FactsCase, judge, read_facts_cases

TABLE = """# Điểm chuẩn năm 2025

Điểm thi tốt nghiệp THPT, thang 30.

| Ngành | Mã ngành | THPT |
|---|---|---|
| Khoa học Máy tính | 7480101 | 26,85 |
| Kỹ thuật Phần mềm | 7480103 | 26,10 |
| Hệ thống Thông tin | 7480104 | 24,60 |
"""

LINE = "- Ngành Khoa học Máy tính: điểm chuẩn 26,85 [1],"
CASES = [
    FactsCase(
        "em được 27 điểm thi THPT có đỗ ngành Khoa học Máy tính không",
        "score_check",
        "Khoa học Máy tính",
        "26,85",
        2025,
        above=True,
    ),
    FactsCase("trường có ngành Dược không ạ", "negative", "Dược"),
    FactsCase("trường có ngành Kỹ thuật Phần mềm không ạ", "positive", "Kỹ thuật Phần mềm"),
    FactsCase("em được 25 điểm thì có đỗ không ạ", "ambiguous"),
    FactsCase(
        "điểm chuẩn THPT ngành Kỹ thuật Phần mềm với ngành Khoa học Máy tính ngành nào cao hơn",
        "comparison",
        "Khoa học Máy tính",
        other="Kỹ thuật Phần mềm",
    ),
    FactsCase("ngành nào có điểm chuẩn thấp nhất", "list", values=("Hệ thống Thông tin", "24,60")),
]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_a_bad_case_is_named_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", [{"question": "x", "kind": "score_check"}])
    with pytest.raises(DatasetError, match=r"cases.jsonl:1: a score check needs"):
        read_facts_cases(path)
    path = _write(tmp_path / "cases.jsonl", [{"question": "x", "kind": "guess"}])
    with pytest.raises(DatasetError, match=r"cases.jsonl:1: `kind` must be one of"):
        read_facts_cases(path)


@pytest.mark.parametrize(
    ("answer", "tier", "expected"),
    [
        (f"{LINE} 27 cao hơn 0,15 điểm.\n2025", "documents", (True, False)),
        (f"{LINE} 27 thấp hơn 0,15 điểm.\n2025", "documents", (False, True)),
        ("Xin lỗi, mình chưa có thông tin", "fallback", (False, False)),
    ],
)  # fmt: skip
def test_a_score_check_needs_the_value_the_comparison_and_the_year(
    answer: str, tier: str, expected: tuple[bool, bool]
) -> None:
    assert judge(CASES[0], tier, answer) == expected


def test_a_yes_like_answer_to_a_negative_is_confidently_wrong() -> None:
    assert judge(CASES[1], "documents", "Ngành Dược học 5 năm [1]") == (False, True)
    assert judge(CASES[1], "fallback", "Xin lỗi") == (False, False)
    assert judge(CASES[1], "documents", "Trường chưa đào tạo ngành Dược.") == (True, False)


def test_a_comparison_or_a_list_is_wrong_when_it_names_the_other_or_misses_one() -> None:
    compared, listed = CASES[4], CASES[5]
    said = "- 2025: Khoa học Máy tính 26,85 [1], Kỹ thuật Phần mềm 26,10 [2]: {} cao hơn."
    assert judge(compared, "documents", said.format("Khoa học Máy tính")) == (True, False)
    assert judge(compared, "documents", said.format("Kỹ thuật Phần mềm")) == (False, True)
    assert judge(listed, "documents", "- Ngành Hệ thống Thông tin: 24,60 [1]") == (True, False)
    assert judge(listed, "documents", "- Ngành Kỹ thuật Phần mềm: 26,10 [1]") == (False, True)
    assert judge(listed, "fallback", "Xin lỗi") == (False, False)


def test_the_facts_command_answers_every_kind_right(tmp_path: Path, database_url: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "diem-chuan-2025.md").write_text(TABLE, encoding="utf-8")
    cases = _write(tmp_path / "cases.jsonl", [c.__dict__ for c in CASES])
    out = tmp_path / "out"
    args = ["eval", "facts", str(cases), "--corpus", str(corpus), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--server-url", database_url])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {(r["form"], r["kind"]): (r["right"], r["confidently_wrong"]) for r in data["rows"]}
    assert rows == {
        (form, kind): (1, 0)
        for form in ("written", "folded")
        for kind in ("score_check", "negative", "positive", "ambiguous", "comparison", "list")
    }, data["misses"]
    assert "None." in (out / "report.md").read_text(encoding="utf-8")
