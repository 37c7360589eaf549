"""Catalogue and facts (issue 2/4): extraction of the cut-off tables, and score checks,
negatives and "does the school have X" answered end to end, written and folded.

**Extraction.** The UIT cut-off CSV (six years) and the demo's cut-off page are read here with
plain ``csv`` / line splitting (the reference), and every cut-off cell is looked for among the
facts tuvan extracts from the same file at ingest: right when a fact has the cell's year, major
code, method (the UIT table's "Điểm chuẩn" column names none, its "Điểm ĐGNL" column ĐGNL) and
value.

**Questions**, generated from the same reference tables (the latest year of each): for every
standard-programme major, score checks half a point above and below its cut-off in three
phrasings ("em được 27,8 điểm thi THPT có đỗ ngành Khoa học máy tính không ạ", "27,8 diem thpt
co dau khmt k ad", "thi THPT được 27,8đ thì vào được ngành … không"); "trường có ngành X không"
for each major it has and for ten majors neither school has; score checks naming no major
(ambiguous: no verdict may be given); each major's THPT cut-off compared with the next one's
(written out and by initials); the highest and the lowest cut-off; and, where the table gives
combinations (UIT), the majors taking each of three. Each is answered by ``Answerer.answer``
over the whole corpus in a throwaway database, as written and folded, and scored by
bot.evaluation.facts (the same as `tuvan eval facts bench/facts-SET.jsonl --corpus DIR`;
`--write-cases` writes those files).

    .venv/bin/python bench/facts_eval.py [--quick] [--sets uit,demo]

``--quick`` (a smoke run): one question or two of each kind, answered over the cut-off file alone
(UIT's cut to its first year: its six years take 10 CPU seconds to embed).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from common import DATASETS, Report, bench_settings, markdown_table
from small_sets import text_folder

from bot.answer.answerer import Answerer
from bot.evaluation.facts import FactsCase, ask_facts, facts_report
from bot.evaluation.workspace import load_corpus, throwaway_database
from bot.runtime import build_parts
from retrieval.facts.extract import extract_facts
from retrieval.facts.model import CUTOFF
from retrieval.facts.names import initials
from retrieval.loading import load_file

ROOT = Path(__file__).resolve().parent.parent
DGNL = "đánh giá năng lực"
THPT = "thi tốt nghiệp THPT"
COMBINATIONS = ["D07", "A00", "D01"]  # the majors taking each, where the table gives them
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
    combinations: tuple[str, ...] = ()

    @property
    def value(self) -> float:
        return float(self.text.replace(",", "."))


UIT_CUTOFFS = DATASETS / "uit-admissions" / "corpus" / "diemchuanUIT.csv"
DEMO_CUTOFFS = ROOT / "bot" / "knowledge" / "demo_kb" / "docs" / "diem-chuan-2025.md"
YEAR_ROW = re.compile(r"\d{4},*\s*$")  # a year heading the UIT table's rows that follow


def uit_cells(path: Path = UIT_CUTOFFS) -> tuple[Path, list[Cell]]:
    cells = []
    year = 0
    with path.open(encoding="utf-8-sig") as handle:
        for row in csv.reader(handle):
            if row[0].isdigit() and len(row[0]) == 4 and not any(row[1:]):
                year = int(row[0])
            elif row[0].isdigit() and year:
                code, name, cutoff, dgnl = row[1].strip(), row[2].strip(), row[4], row[5]
                combos = tuple(re.findall(r"[A-Z]\d\d", row[3].upper()))
                if cutoff.strip():
                    cells.append(Cell(year, code, name, None, cutoff.strip(), combos))
                if dgnl.strip():
                    cells.append(Cell(year, code, name, DGNL, dgnl.strip()))
    return path, cells


def demo_cells(path: Path = DEMO_CUTOFFS) -> tuple[Path, list[Cell]]:
    cells = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) == 5 and re.fullmatch(r"\d{7}(?:_\w+)?", cols[1]):
            for method, text in zip((THPT, DGNL, "học bạ"), cols[2:], strict=True):
                if text != "—":
                    cells.append(Cell(2025, cols[1], cols[0].split(" – ")[0], method, text))
    return path, cells


def quick_corpus(name: str, path: Path) -> Path:
    """--quick's corpus: the cut-off file alone, UIT's cut before its second year."""
    text = path.read_text(encoding="utf-8")
    if name == "uit":
        lines = text.splitlines(keepends=True)
        years = [i for i, line in enumerate(lines) if YEAR_ROW.match(line.lstrip("\ufeff"))]
        text = "".join(lines[: years[1]] if len(years) > 1 else lines)
    return text_folder(f"facts-{name}", {path.name: text})


def extraction(path: Path, cells: list[Cell], parts_guard: object) -> tuple[int, int, list[Cell]]:
    facts = extract_facts(load_file(path), parts_guard)  # type: ignore[arg-type]
    found = {
        (f.year, (f.code or "").upper(), f.method, f.value)
        for f in facts.facts
        if f.attribute == CUTOFF
    }
    missed = [c for c in cells if (c.year, c.code.upper(), c.method, c.value) not in found]
    return len(cells) - len(missed), len(cells), missed


def cases(cells: list[Cell], quick: bool) -> list[FactsCase]:
    """Score checks half a point above and below each standard-programme cut-off of the latest
    year, "does the school have X" for those majors and for ten it has not, and two score checks
    naming no major."""
    latest = max(c.year for c in cells)
    standard = [
        c for c in cells
        if c.year == latest and c.code.isdigit() and c.method in (None, THPT)
    ]  # fmt: skip
    out: list[FactsCase] = []
    for c in standard[: 1 if quick else None]:
        for delta in (0.5, -0.5):
            score = f"{c.value + delta:.2f}".rstrip("0").rstrip(".").replace(".", ",")
            short = initials(c.name) or c.name
            for question in (
                f"em được {score} điểm thi THPT có đỗ ngành {c.name} không ạ",
                f"{score} diem thpt co dau {short} k ad",
                f"thi THPT được {score}đ thì vào được ngành {c.name} không",
            ):
                out.append(FactsCase(question, "score_check", c.name, c.text, latest, delta > 0))
        out.append(FactsCase(f"trường có ngành {c.name} không ạ", "positive", c.name))
    for name in NOT_OFFERED[: 1 if quick else None]:
        out.append(FactsCase(f"trường có ngành {name} không ạ", "negative", name))
    out.append(FactsCase("em được 25 điểm thì có đỗ không ạ", "ambiguous"))
    out.append(FactsCase("24,5 điểm khối A00 có đậu không ad", "ambiguous"))
    for a, b in zip(standard, standard[1:2] if quick else standard[1:], strict=False):
        if a.value == b.value:
            continue
        high, low = (a, b) if a.value > b.value else (b, a)
        for question in (
            f"điểm chuẩn THPT ngành {a.name} với ngành {b.name} ngành nào cao hơn",
            f"{initials(a.name) or a.name} vs {initials(b.name) or b.name} diem chuan thpt"
            " nganh nao cao hon",
        ):
            out.append(FactsCase(question, "comparison", high.name, other=low.name))
    thpt = [c for c in cells if c.year == latest and c.method in (None, THPT)]
    for word, pick in (("cao nhất", max), ("thấp nhất", min)):
        best = pick(thpt, key=lambda c: c.value)
        question = f"ngành nào có điểm chuẩn {word} năm {latest}"
        out.append(FactsCase(question, "list", values=(best.text,)))
    for combo in COMBINATIONS[: 1 if quick else None]:
        taking = sorted({c.name for c in standard if combo in c.combinations and "(" not in c.name})
        if taking:
            out.append(
                FactsCase(f"những ngành nào xét tổ hợp {combo}", "list", values=tuple(taking))
            )
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few questions of each kind")
    parser.add_argument("--sets", default="uit,demo")
    parser.add_argument(
        "--write-cases", action="store_true", help="write the questions to bench/facts-SET.jsonl"
    )
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
        if args.quick:
            corpus = quick_corpus(name, path)
            path, cells = reference(corpus / path.name)
        right, total, missed = extraction(path, cells, parts.guard)
        extraction_rows.append([name, f"{right}/{total}", f"{right / total:.3f}"])
        report.data.setdefault("extraction", {})[name] = {
            "right": right, "total": total, "missed": [c.__dict__ for c in missed[:20]],
        }  # fmt: skip
        asked = cases(cells, args.quick)
        if args.write_cases:
            target = ROOT / "bench" / f"facts-{name}.jsonl"
            target.write_text(
                "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in asked),
                encoding="utf-8",
            )
        async with throwaway_database() as workspace:
            await load_corpus(workspace, parts, corpus)
            answerer = Answerer(parts, workspace.sessionmaker)
            outcomes = await ask_facts(asked, answerer.answer)
        data, _ = facts_report(outcomes, name)
        report.data.setdefault("questions", {})[name] = data
        for r in data["rows"]:
            right = f"{r['right']}/{r['questions']}"
            rows.append([name, r["form"], r["kind"], r["questions"], right, r["confidently_wrong"]])
    report.data["rows"] = rows
    report.print_header([f"sets {args.sets}"])
    print(markdown_table(["set", "cut-off cells read right", "share"], extraction_rows))
    print()
    print(markdown_table(["set", "form", "kind", "questions", "right", "confidently wrong"], rows))
    report.finish()


if __name__ == "__main__":
    asyncio.run(main())
