"""Catalogue and facts (issue 2/4): extraction of the cut-off tables, and score checks,
negatives and "does the school have X" answered end to end, written and folded.

**Extraction.** The UIT cut-off CSV (six years) and the demo's cut-off page are read here with
plain ``csv`` / line splitting (the reference), and every cut-off cell is looked for among the
facts tuvan extracts from the same file at ingest: right when a fact has the cell's year, major
code, method (the UIT table's "Điểm chuẩn" column names none, its "Điểm ĐGNL" column ĐGNL) and
value.

**Questions**, generated from the same reference tables (the latest year of each): for every
standard-programme major, a score check half a point above and one below its cut-off ("em được
27,8 điểm có đỗ ngành Khoa học máy tính không ạ"); "trường có ngành X không" for each major it
has and for ten majors neither school has; and score checks naming no major (ambiguous: no
verdict may be given). Each is answered by ``Answerer.answer`` over the whole corpus in a
throwaway database, as written and folded. A score check is right when the line quoting the
major's standard cut-off states that value and the right comparison, and the answer names the
year; a negative is right when it says the school does not offer the major; a "yes-like" answer
to a negative is any answer from the documents that does not.

    .venv/bin/python bench/facts_eval.py [--quick] [--sets uit,demo]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import re
from dataclasses import dataclass
from pathlib import Path

from common import DATASETS, Report, bench_settings, markdown_table

from bot.answer.answerer import Answerer
from bot.evaluation.workspace import load_corpus, throwaway_database
from bot.runtime import build_parts
from retrieval.facts.extract import extract_facts
from retrieval.facts.model import CUTOFF
from retrieval.loading import load_file
from retrieval.text.folding import fold

ROOT = Path(__file__).resolve().parent.parent
DGNL = "đánh giá năng lực"
THPT = "thi tốt nghiệp THPT"
NOT_OFFERED = [
    "Dược", "Y khoa", "Luật", "Kiến trúc", "Báo chí", "Ngôn ngữ Anh", "Kế toán",
    "Du lịch", "Sư phạm Toán", "Thú y",
]  # fmt: skip


@dataclass(frozen=True)
class Cell:
    year: int
    code: str
    name: str
    method: str | None
    text: str

    @property
    def value(self) -> float:
        return float(self.text.replace(",", "."))


@dataclass(frozen=True)
class Case:
    question: str
    kind: str  # score_check, negative, positive, ambiguous
    name: str = ""
    cutoff: str = ""
    year: int = 0
    above: bool = False


def uit_cells() -> tuple[Path, list[Cell]]:
    path = DATASETS / "uit-admissions" / "corpus" / "diemchuanUIT.csv"
    cells = []
    year = 0
    with path.open(encoding="utf-8-sig") as handle:
        for row in csv.reader(handle):
            if row[0].isdigit() and len(row[0]) == 4 and not any(row[1:]):
                year = int(row[0])
            elif row[0].isdigit() and year:
                code, name, cutoff, dgnl = row[1].strip(), row[2].strip(), row[4], row[5]
                if cutoff.strip():
                    cells.append(Cell(year, code, name, None, cutoff.strip()))
                if dgnl.strip():
                    cells.append(Cell(year, code, name, DGNL, dgnl.strip()))
    return path, cells


def demo_cells() -> tuple[Path, list[Cell]]:
    path = ROOT / "bot" / "knowledge" / "demo_kb" / "docs" / "diem-chuan-2025.md"
    cells = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) == 5 and re.fullmatch(r"\d{7}(?:_\w+)?", cols[1]):
            for method, text in zip((THPT, DGNL, "học bạ"), cols[2:], strict=True):
                if text != "—":
                    cells.append(Cell(2025, cols[1], cols[0].split(" – ")[0], method, text))
    return path, cells


def extraction(path: Path, cells: list[Cell], parts_guard: object) -> tuple[int, int, list[Cell]]:
    facts = extract_facts(load_file(path), parts_guard)  # type: ignore[arg-type]
    found = {
        (f.year, (f.code or "").upper(), f.method, f.value)
        for f in facts.facts
        if f.attribute == CUTOFF
    }
    missed = [
        c for c in cells if (c.year, c.code.upper(), c.method, c.value) not in found
    ]
    return len(cells) - len(missed), len(cells), missed


def cases(cells: list[Cell], quick: bool) -> list[Case]:
    latest = max(c.year for c in cells)
    standard = [
        c for c in cells
        if c.year == latest and c.code.isdigit() and c.method in (None, THPT)
    ]  # fmt: skip
    out: list[Case] = []
    for c in standard[: 4 if quick else None]:
        for delta in (0.5, -0.5):
            score = f"{c.value + delta:.2f}".rstrip("0").rstrip(".").replace(".", ",")
            out.append(
                Case(
                    f"em được {score} điểm thi THPT có đỗ ngành {c.name} không ạ",
                    "score_check", c.name, c.text, latest, delta > 0,
                )
            )  # fmt: skip
        out.append(Case(f"trường có ngành {c.name} không ạ", "positive", c.name))
    for name in NOT_OFFERED[: 3 if quick else None]:
        out.append(Case(f"trường có ngành {name} không ạ", "negative", name))
    out.append(Case("em được 25 điểm thì có đỗ không ạ", "ambiguous"))
    out.append(Case("24,5 điểm khối A00 có đậu không ad", "ambiguous"))
    return out


def judge(case: Case, tier: str, answer: str) -> tuple[bool, bool]:
    """(right, confidently wrong) for one answer."""
    folded = fold(answer)
    if case.kind == "negative":
        said_no = "chua dao tao" in folded or "there is no" in folded
        return said_no, tier != "fallback" and not said_no
    if case.kind == "positive":
        said_yes = folded.startswith("co, truong dao tao") or folded.startswith("yes, the school")
        return said_yes, "chua dao tao" in folded
    if case.kind == "ambiguous":
        verdict = "cao hon" in folded or "thap hon" in folded
        return not verdict, verdict
    lines = [
        fold(line) for line in answer.splitlines()
        if fold(case.name) in fold(line) and "chuong trinh" not in fold(line)
    ]  # fmt: skip
    want = "cao hon" if case.above else "thap hon"
    value = fold(case.cutoff)
    right = str(case.year) in answer and any(value in line and want in line for line in lines)
    wrong_said = any(
        ("cao hon" in line or "thap hon" in line) and not (value in line and want in line)
        for line in lines
    )
    return right, tier != "fallback" and not right and (wrong_said or bool(lines))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few questions of each kind")
    parser.add_argument("--sets", default="uit,demo")
    args = parser.parse_args()
    report = Report("facts_eval" + ("_quick" if args.quick else ""))
    settings = bench_settings()
    parts = build_parts(settings)
    sets = {
        "uit": (uit_cells, DATASETS / "uit-admissions" / "corpus"),
        "demo": (demo_cells, ROOT / "bot" / "knowledge" / "demo_kb" / "docs"),
    }
    rows = []
    extraction_rows = []
    for name in args.sets.split(","):
        reference, corpus = sets[name]
        path, cells = reference()
        right, total, missed = extraction(path, cells, parts.guard)
        extraction_rows.append([name, f"{right}/{total}", f"{right / total:.3f}"])
        report.data.setdefault("extraction", {})[name] = {
            "right": right, "total": total, "missed": [c.__dict__ for c in missed[:20]],
        }  # fmt: skip
        asked = cases(cells, args.quick)
        async with throwaway_database() as workspace:
            await load_corpus(workspace, parts, corpus)
            answerer = Answerer(parts, workspace.sessionmaker)
            for form in ("written", "folded"):
                tally: dict[str, list[int]] = {}
                for case in asked:
                    question = case.question if form == "written" else fold(case.question)
                    answer = await answerer.answer(question)
                    ok, wrong = judge(case, answer.tier, answer.answer)
                    counts = tally.setdefault(case.kind, [0, 0, 0])
                    counts[0] += 1
                    counts[1] += ok
                    counts[2] += wrong
                    if not ok:
                        report.data.setdefault("misses", []).append(
                            {"set": name, "form": form, "question": question,
                             "answer": answer.answer[:400], "wrong": wrong}
                        )  # fmt: skip
                for kind, (n, ok, wrong) in tally.items():
                    rows.append([name, form, kind, n, f"{ok}/{n}", wrong])
    report.data["rows"] = rows
    report.print_header([f"sets {args.sets}"])
    print(markdown_table(["set", "cut-off cells read right", "share"], extraction_rows))
    print()
    print(markdown_table(["set", "form", "kind", "questions", "right", "confidently wrong"], rows))
    report.finish()


if __name__ == "__main__":
    asyncio.run(main())
