"""`tuvan eval faq` / `calibrate`: tier 1 on a small Vietnamese FAQ, in a throwaway database
on the session's PostgreSQL, with the real embedder and guard; scoring and the report."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from bot.answer.parts import AnswererParts
from bot.cli.group import cli
from bot.evaluation.data import FaqQuery, read_faq_items, read_faq_queries
from bot.evaluation.faq import CAUSES, FaqEvaluation, QueryOutcome, evaluate_faq
from bot.evaluation.faq_report import faq_plots, faq_report
from bot.evaluation.metrics import Choice, choose_threshold, faq_rates

FAQ = [
    {
        "id": "fees",
        "question": "Học phí ngành Khoa học Máy tính năm 2025 là bao nhiêu?",
        "answer": "Học phí ngành Khoa học Máy tính năm 2025 là 35 triệu đồng mỗi năm.",
    },
    {
        "id": "deadline",
        "question": "Hạn chót nộp hồ sơ xét tuyển năm 2025 là ngày nào?",
        "answer": "Hạn chót nộp hồ sơ là ngày 30/7/2025.",
    },
    {
        "id": "dorm",
        "question": "Trường có ký túc xá cho sinh viên năm nhất không?",
        "answer": "Có, sinh viên năm nhất được đăng ký ở Ký túc xá ĐHQG-HCM.",
    },
    {
        "id": "contact",
        "question": "Số điện thoại của phòng tuyển sinh là gì?",
        "answer": "Phòng Tuyển sinh: 028 3725 2002.",
    },
    {
        "id": "scholarship",
        "question": "Trường có học bổng cho tân sinh viên không?",
        "answer": "Có, trường có học bổng tuyển sinh cho tân sinh viên có điểm cao.",
    },
]

UNACCENTED = "hoc phi nganh khoa hoc may tinh nam 2025 la bao nhieu"
OTHER_MAJOR = "Học phí ngành Kỹ thuật Máy tính năm 2025 là bao nhiêu?"
OTHER_YEAR = "Học phí ngành Khoa học Máy tính năm 2024 là bao nhiêu?"
QUERIES = [
    {"query": "Học phí ngành Khoa học Máy tính năm 2025 bao nhiêu vậy?", "expected_faq": "fees"},
    {"query": UNACCENTED, "expected_faq": "fees"},
    {"query": "Hạn cuối nộp hồ sơ xét tuyển năm 2025 là ngày nào?", "expected_faq": "deadline"},
    {"query": "Trường có ký túc xá cho sinh viên năm nhất không ạ?", "expected_faq": "dorm"},
    {"query": "Số điện thoại phòng tuyển sinh là số nào?", "expected_faq": "contact"},
    {"query": "Trường có học bổng cho tân sinh viên không ạ?", "expected_faq": "scholarship"},
    {"query": OTHER_MAJOR, "kind": "near_miss", "confusable_with": "fees"},
    {"query": OTHER_YEAR, "kind": "near_miss", "confusable_with": "fees"},
    {"query": "Thời tiết ở Thủ Đức hôm nay thế nào?", "kind": "out_of_scope"},
    {"query": "Quán cơm tấm nào gần trường ngon nhất?", "kind": "out_of_scope"},
]
PREFIX = "tuvan_eval_%"


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def psycopg_url(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


def eval_databases(database_url: str) -> list[str]:
    with psycopg.connect(psycopg_url(database_url)) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (PREFIX,))
        return [r[0] for r in rows]


class Run:
    def __init__(self, ev: FaqEvaluation, progress: list[int], during: list[str]) -> None:
        self.ev = ev
        self.progress = progress
        self.during = during

    def outcome(self, query: str, form: str = "written") -> QueryOutcome:
        found = self.ev.written if form == "written" else self.ev.folded
        assert found is not None
        return next(o for o in found.outcomes if o.query.query == query)


async def evaluate(
    folder: Path, parts: AnswererParts, database_url: str, *, unaccented: bool = False
) -> Run:
    items = read_faq_items(write_jsonl(folder / "faq.jsonl", FAQ))
    rows = [{"kind": "paraphrase", "expected_faq": None, **q} for q in QUERIES]
    queries = read_faq_queries(write_jsonl(folder / "queries.jsonl", rows), {i.id for i in items})
    progress: list[int] = []
    during: list[str] = []

    def on_query(n: int) -> None:
        if not progress:  # the throwaway database exists while queries are fetched
            during.extend(eval_databases(database_url))
        progress.append(n)

    ev = await evaluate_faq(
        parts, items, queries, server_url=database_url, on_query=on_query, unaccented=unaccented
    )
    return Run(ev, progress, during)


@pytest.fixture(scope="module")
async def run(
    tmp_path_factory: pytest.TempPathFactory, parts: AnswererParts, database_url: str
) -> Run:
    return await evaluate(tmp_path_factory.mktemp("faq-eval"), parts, database_url, unaccented=True)


# -- tier 1 on a real database --------------------------------------------------------------


async def test_nothing_the_tier_answers_is_wrong_and_look_alikes_are_turned_away(run: Run) -> None:
    for form in run.ev.forms:
        assert form.rates.precision == 1.0
        assert form.rates.false_accept == 0.0
        assert all(o.got is None for o in form.outcomes if o.query.kind != "paraphrase")
    other = run.outcome(OTHER_MAJOR)
    assert other.got is None
    assert other.best_id != "fees"  # the guard ruled the fees entry out: another major


async def test_an_entry_question_typed_without_marks_is_matched_verbatim(run: Run) -> None:
    assert run.outcome(UNACCENTED).got == "fees"
    assert run.outcome(UNACCENTED, "folded").got == "fees"


async def test_every_fitted_risk_target_is_reported_with_this_faqs_threshold(run: Run) -> None:
    decisions = run.ev.written.per_risk
    risks = [r for r, _, _ in decisions]
    assert risks == sorted(risks)
    assert run.ev.risk in risks
    thresholds = [t for _, t, _ in decisions]
    # a higher risk target never asks for more than a lower one
    assert all(a >= b - 1e-9 for a, b in itertools.pairwise(thresholds))
    answered = [r.answered for _, _, r in decisions]
    assert all(a <= b for a, b in itertools.pairwise(answered))
    assert len(run.ev.calibration) == len(FAQ)  # each entry asked without itself


async def test_the_curve_answers_fewer_as_the_threshold_rises(run: Run) -> None:
    answered = [r.answered for _, r in run.ev.written.curve]
    assert answered == sorted(answered, reverse=True)


async def test_each_query_reports_progress(run: Run) -> None:
    assert run.progress == [1] * (2 * len(QUERIES))  # one database, both forms


async def test_the_throwaway_database_lives_on_the_server_and_is_dropped(
    run: Run, database_url: str
) -> None:
    assert len(run.during) == 1
    assert eval_databases(database_url) == []


async def test_report_of_a_real_run(run: Run) -> None:
    data, markdown = faq_report(run.ev)
    for key in ("precision", "coverage", "false_accept", "risk", "threshold", "embedder"):
        assert key in data
    for form in ("written", "folded"):
        assert set(data[form]) >= {"per_risk", "curve", "reliability", "misses", "miss_causes"}
        assert set(data[form]["miss_causes"]) == set(CAUSES)
    assert "## The coverage each risk target gives" in markdown
    assert "## Probabilities against outcomes (without diacritics)" in markdown
    json.dumps(data)  # serialisable as it is
    assert faq_report(run.ev) == (data, markdown)


def test_the_faq_command_reports_both_forms(tmp_path: Path, database_url: str) -> None:
    faq = write_jsonl(tmp_path / "faq.jsonl", FAQ)
    rows = [{"kind": "paraphrase", "expected_faq": None, **q} for q in QUERIES]
    queries = write_jsonl(tmp_path / "queries.jsonl", rows)
    out = tmp_path / "out"
    args = ["eval", "faq", str(faq), str(queries), "--unaccented", "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--risk", "0.05", "--server-url", database_url])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["risk"] == 0.05
    assert set(data["folded"]) >= {"precision", "coverage", "false_accept", "misses"}
    assert "| without diacritics |" in (out / "report.md").read_text(encoding="utf-8")


async def test_plot_is_a_png(run: Run, tmp_path: Path) -> None:
    [path] = faq_plots(run.ev, tmp_path / "out")
    assert path.name == "faq_precision_coverage.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the rates ------------------------------------------------------------------------------


def test_faq_rates_by_hand() -> None:
    queries = [
        FaqQuery("a", "x", "paraphrase"),
        FaqQuery("b", "y", "paraphrase", also_correct=("z",)),
        FaqQuery("c", None, "near_miss", confusable_with="x"),
        FaqQuery("d", None, "out_of_scope"),
    ]
    rates = faq_rates(queries, ["x", "z", "x", None])
    assert rates.precision == 2 / 3  # the near miss answered is the one wrong answer
    assert rates.coverage == 1.0  # "z" is also correct for "b"
    assert rates.false_accept == 0.5
    assert (rates.false_accept_near_miss, rates.false_accept_out_of_scope) == (1.0, 0.0)


def test_faq_rates_with_no_answer_has_full_precision_and_no_coverage() -> None:
    rates = faq_rates([FaqQuery("a", "x", "paraphrase")], [None])
    assert (rates.precision, rates.coverage, rates.answered) == (1.0, 0.0, 0)


def test_choose_threshold_takes_the_widest_coverage_meeting_the_precision() -> None:
    choice = choose_threshold([(0.8, 0.95, 0.9), (0.85, 0.99, 0.7), (0.9, 1.0, 0.5)], 0.99)
    assert choice == Choice(0.85, True, 0.99, 0.7)
