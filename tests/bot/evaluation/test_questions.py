"""``tuvan eval questions``: loaders, metrics, a real run on a throwaway database, the command."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.answer.parts import AnswererParts
from bot.answer.replies import answer_body
from bot.cli.group import cli
from bot.core.errors import DatasetError, RetrievalError
from bot.evaluation.calibration import calibrate_t_doc
from bot.evaluation.data import read_passages, read_questions
from bot.evaluation.judge import Judge
from bot.evaluation.metrics import facts_found, first_ranks, norm, ranking_metrics
from bot.evaluation.questions import (
    Knowledge,
    QuestionsEvaluation,
    evaluate_questions,
)
from bot.evaluation.questions_report import questions_plots, questions_report
from bot.evaluation.report import write_json
from tests.fakes.openai_stub import OpenAIStub

PASSAGES = [
    {
        "chunk_id": "p1",
        "source": "hoc-phi.pdf",
        "page": 2,
        "title": "Học phí",
        "text": "Học phí năm học 2026-2027 của chương trình chuẩn là 32.000.000 đồng mỗi năm.",
    },
    {
        "chunk_id": "p2",
        "source": "hoc-phi.pdf",
        "page": 3,
        "title": "Học phí",
        "text": "Sinh viên đóng học phí theo học kỳ, hạn chót là ngày 15/10 hằng năm.",
    },
    {
        "id": "p3",
        "source": "ky-tuc-xa.md",
        "text": "Ký túc xá có 1.200 chỗ ở; phí ở ký túc xá là 500.000 đồng mỗi tháng.",
    },
    {
        "id": "p4",
        "source": "tuyen-sinh.md",
        "text": "Ngành Khoa học Máy tính có mã ngành 7480101 và tuyển 240 chỉ tiêu năm 2026.",
    },
    {
        "id": "p5",
        "text": "Thư viện mở cửa từ 7 giờ đến 21 giờ các ngày trong tuần.",
    },
]

QUESTIONS = [
    {
        "id": "q1",
        "question": "Học phí chương trình chuẩn năm 2026 là bao nhiêu?",
        "type": "factoid",
        "answer": "32.000.000 đồng mỗi năm",
        "relevant_ids": ["p1"],
        "sources": [{"source": "hoc-phi.pdf", "page": 2}],
        "key_facts": ["32.000.000"],
    },
    {
        "id": "q2",
        "question": "ma nganh khoa hoc may tinh la gi",
        "type": "factoid",
        "answer": "7480101",
        "relevant_ids": ["p4"],
        "sources": [{"source": "tuyen-sinh.md", "page": None}],
        "key_facts": ["7480101"],
    },
    {
        "id": "q3",
        "question": "Phí ký túc xá mỗi tháng bao nhiêu và hạn đóng học phí là khi nào?",
        "type": "multi_hop",
        "answer": "500.000 đồng; 15/10",
        "relevant_ids": ["p3", "p2"],
        "sources": [{"source": "ky-tuc-xa.md", "page": None}, {"source": "hoc-phi.pdf", "page": 3}],
        "key_facts": ["500.000"],
    },
    {
        "id": "q4",
        "question": "Giá vé máy bay từ Hà Nội đi Tokyo tháng sau là bao nhiêu?",
        "type": "out_of_scope",
        "answer": "",
    },
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return path


# -- files ------------------------------------------------------------------------------------


def test_questions_and_passages_are_read_with_their_fields(tmp_path: Path) -> None:
    questions = read_questions(write_jsonl(tmp_path / "q.jsonl", QUESTIONS))
    assert [q.id for q in questions] == ["q1", "q2", "q3", "q4"]
    assert questions[0].sources[0].page == 2
    assert questions[0].key_facts == ("32.000.000",)
    assert questions[3].out_of_scope
    assert not questions[3].relevant_ids
    passages = read_passages(write_jsonl(tmp_path / "p.jsonl", PASSAGES))
    assert [p.id for p in passages] == ["p1", "p2", "p3", "p4", "p5"]
    assert passages[4].source is None
    assert passages[0].page == 2


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"q.jsonl:2: not JSON"),
        ('{"id": "x"}', r"q.jsonl:2: `question` must be a non-empty string"),
        ('{"question": "a?", "type": "opinion"}', r"q.jsonl:2: `type` must be one of"),
        ('{"question": "a?", "sources": [{"page": 1}]}', r"q.jsonl:2: each source needs"),
        ('{"id": "q1", "question": "again?"}', r"question id 'q1' appears twice"),
        ('["a list"]', r"q.jsonl:2: expected a JSON object"),
    ],
)
def test_a_bad_question_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(QUESTIONS[0]) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        read_questions(path)


def test_a_passage_without_an_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="needs `chunk_id` or `id`"):
        read_passages(write_jsonl(tmp_path / "p.jsonl", [{"text": "x"}]))


# -- metrics ----------------------------------------------------------------------------------


def test_ranking_metrics_by_hand() -> None:
    ranked = first_ranks(["a", "x", "a", "b", "y", "c"])  # -> a x b y c
    assert ranked == ["a", "x", "b", "y", "c"]
    m = ranking_metrics(ranked, {"b", "c"}, ks=(1, 3, 5))
    assert (m["hit@1"], m["hit@3"], m["mrr@1"], m["mrr@3"]) == (0.0, 1.0, 0.0, 1 / 3)
    assert m["recall@3"] == 0.5
    assert m["recall@5"] == 1.0
    assert (m["all@3"], m["all@5"]) == (0.0, 1.0)
    ideal = 1 + 1 / math.log2(3)
    assert m["ndcg@3"] == pytest.approx((1 / math.log2(4)) / ideal)
    assert m["ndcg@5"] == pytest.approx((1 / math.log2(4) + 1 / math.log2(6)) / ideal)


def test_key_facts_compare_without_accents_case_or_spacing() -> None:
    assert norm("  Ký   TÚC xá  Đại ") == "ky tuc xa dai"
    answer = "Phí ký túc xá là 500.000 ĐỒNG mỗi tháng"
    assert facts_found(answer, ["500.000 đồng", "mỗi  tháng", "600.000"]) == 2


# -- a run ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def evaluation(
    tmp_path_factory: pytest.TempPathFactory, parts: AnswererParts, database_url: str
) -> QuestionsEvaluation:
    tmp = tmp_path_factory.mktemp("eval")
    questions = read_questions(write_jsonl(tmp / "q.jsonl", QUESTIONS))
    passages = read_passages(write_jsonl(tmp / "p.jsonl", PASSAGES))
    return await evaluate_questions(
        parts,
        questions,
        Knowledge(passages=passages),
        modes=["dense", "bm25", "hybrid"],
        ks=(1, 3, 5),
        server_url=database_url,
        unaccented=True,
    )


async def test_passages_are_scored_at_chunk_document_and_page_level(
    evaluation: QuestionsEvaluation,
) -> None:
    assert evaluation.levels == ["chunk", "document", "page"]
    assert evaluation.loaded == {"passages": 5}
    hybrid = evaluation.modes["hybrid"].per_question
    # Out-of-scope rows are not ranked; q2 has no page, so it is not scored at page level.
    assert set(hybrid["chunk"]) == {"q1", "q2", "q3"}
    assert set(hybrid["page"]) == {"q1", "q3"}
    for level in ("chunk", "document", "page"):
        assert hybrid[level]["q1"]["hit@1"] == 1.0, level
    assert hybrid["chunk"]["q2"]["hit@3"] == 1.0  # typed without diacritics
    assert evaluation.metrics("hybrid", "chunk")["hit@5"] == 1.0
    assert hybrid["chunk"]["q3"]["recall@5"] == 1.0


async def test_every_question_is_answered_once_and_out_of_scope_falls_back(
    evaluation: QuestionsEvaluation,
) -> None:
    data, markdown = questions_report(evaluation)
    assert sum(data["tiers"].values()) == 4
    assert data["out_of_scope"] == {
        "questions": 1,
        "fallback": 1,
        "answered_wrongly": 0,
        "fallback_rate": 1.0,
    }
    by_id = {o.question.id: o for o in evaluation.outcomes}
    assert by_id["q1"].answer.tier == "documents"
    assert by_id["q1"].complete
    assert data["key_facts"]["questions"] == 3
    # How long the documents answers are, before their sources (3/6).
    documents = [o for o in evaluation.outcomes if o.answer.tier == "documents"]
    sizes = sorted(len(answer_body(o.answer).strip()) for o in documents)
    lengths = data["answer_length"]["documents"]
    assert lengths["answers"] == len(documents) >= 1
    assert lengths["median"] == statistics.median(sizes)
    assert lengths["p90"] == sizes[math.ceil(0.9 * len(sizes)) - 1]
    assert "median / p90 characters before the sources" in markdown
    assert data["metrics"] == data["modes"]["hybrid"]  # the configured mode on top
    assert set(data["metrics"]) == {"chunk", "document", "page"}
    assert {"hit@5", "mrr@5", "ndcg@5", "recall@5"} <= set(data["metrics"]["chunk"])
    assert "## Error analysis" in markdown
    assert "| dense |" in markdown


async def test_unaccented_asks_every_question_again_folded_and_reports_both(
    evaluation: QuestionsEvaluation,
) -> None:
    folded = evaluation.unaccented
    assert folded is not None
    assert next(q.question for q in folded.questions) == (
        "hoc phi chuong trinh chuan nam 2026 la bao nhieu?"
    )
    assert [q.id for q in folded.questions] == [q.id for q in evaluation.questions]
    assert set(folded.modes) == set(evaluation.modes)
    assert len(folded.outcomes) == len(evaluation.outcomes)
    # restored before it is embedded, the folded question still finds its passage
    assert folded.modes["dense"].per_question["chunk"]["q1"]["hit@1"] == 1.0
    data, markdown = questions_report(evaluation)
    assert data["unaccented"]["modes"]["hybrid"]["chunk"]["hit@1"] is not None
    summary = markdown.split("## Written and unaccented")[1].split("## Retrieval")[0]
    assert "Hit@1 written" in summary
    assert "Hit@1 unaccented" in summary
    assert "| chunk | hybrid |" in summary
    assert "# Asked without diacritics" in markdown
    assert "ranking (unaccented)" in evaluation.seconds


async def test_report_files_are_written_and_repeatable(
    evaluation: QuestionsEvaluation, tmp_path: Path
) -> None:
    data, _ = questions_report(evaluation)
    again, _ = questions_report(evaluation)
    write_json(tmp_path, data)
    stored = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert stored["metrics"]["chunk"]["hit@1"] == round(data["metrics"]["chunk"]["hit@1"], 4)
    assert json.dumps(data, sort_keys=True, default=str) == json.dumps(
        again, sort_keys=True, default=str
    )
    paths = questions_plots(evaluation, data, tmp_path)
    assert {p.name for p in paths} == {
        "metrics_chunk.png",
        "metrics_document.png",
        "metrics_page.png",
        "tiers.png",
    }
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_the_throwaway_database_is_dropped(
    evaluation: QuestionsEvaluation, engine: AsyncEngine
) -> None:
    async with engine.connect() as conn:
        left = await conn.execute(
            text("SELECT datname FROM pg_database WHERE datname LIKE 'tuvan_eval_%'")
        )
        assert left.all() == []


async def test_user_text_is_escaped_in_the_markdown(
    tmp_path: Path, parts: AnswererParts, database_url: str
) -> None:
    rows = [{**QUESTIONS[1], "question": "ma nganh | khoa hoc may tinh?", "relevant_ids": ["p9"]}]
    evaluation = await evaluate_questions(
        parts,
        read_questions(write_jsonl(tmp_path / "q.jsonl", rows)),
        Knowledge(passages=read_passages(write_jsonl(tmp_path / "p.jsonl", PASSAGES[3:4]))),
        modes=["bm25"],
        ks=(1,),
        server_url=database_url,
    )
    _, markdown = questions_report(evaluation)
    assert "ma nganh \\| khoa hoc may tinh?" in markdown  # a retrieval miss, listed


async def test_rerank_without_a_model_is_a_clear_error(parts: AnswererParts) -> None:
    with pytest.raises(RetrievalError, match="TUVAN_SEARCH__RERANKER_PATH"):
        await evaluate_questions(
            parts, [], Knowledge(passages=[]), modes=["hybrid+rerank"], server_url="unused"
        )


# -- the judge --------------------------------------------------------------------------------


async def test_the_judge_grades_against_the_gold_answer(
    stub: OpenAIStub, parts: AnswererParts
) -> None:
    settings = parts.settings.llm.model_copy(update={"base_url": stub.base_url, "model": "judge"})
    judge = Judge(settings)
    stub.script_chat("CORRECT")
    stub.script_chat("Incorrect.")
    stub.script_chat("I think it is right")  # not a verdict: counted as incorrect
    try:
        assert await judge.correct("q?", "32.000.000 đồng", "32 triệu đồng") is True
        assert await judge.correct("q?", "32.000.000 đồng", "40 triệu") is False
        assert await judge.correct("q?", "32.000.000 đồng", "?") is False
    finally:
        await judge.aclose()
    sent = stub.requests_to("/v1/chat/completions")[0].body
    assert sent["model"] == "judge"
    assert "Reference answer: 32.000.000 đồng" in sent["messages"][1]["content"]
    assert judge.describe().startswith("judge at http://127.0.0.1")


# -- the command ------------------------------------------------------------------------------


def test_the_command_names_a_bad_file_line(tmp_path: Path) -> None:
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question": "a?"}\n{oops\n', encoding="utf-8")
    passages = write_jsonl(tmp_path / "p.jsonl", PASSAGES)
    result = CliRunner().invoke(cli, ["eval", "questions", str(bad), "--chunks", str(passages)])
    assert result.exit_code == 1
    assert "q.jsonl:2: not JSON" in result.output
    assert "Traceback" not in result.output


def test_the_command_wants_one_knowledge_source(tmp_path: Path) -> None:
    questions = write_jsonl(tmp_path / "q.jsonl", QUESTIONS)
    result = CliRunner().invoke(cli, ["eval", "questions", str(questions)])
    assert result.exit_code == 2
    assert "exactly one of --corpus DIR and --chunks" in result.output


async def test_t_doc_calibration_sweeps_the_answerer(
    tmp_path: Path, parts: AnswererParts, database_url: str
) -> None:
    choice, points = await calibrate_t_doc(
        parts,
        read_questions(write_jsonl(tmp_path / "q.jsonl", QUESTIONS)),
        Knowledge(passages=read_passages(write_jsonl(tmp_path / "p.jsonl", PASSAGES))),
        required_precision=0.9,
        low=0.80,
        high=0.99,
        step=0.095,
        server_url=database_url,
    )
    assert [p.threshold for p in points] == [0.8, 0.895, 0.99]
    answered = [p.answered for p in points]
    assert answered == sorted(answered, reverse=True)
    assert points[-1].answered == 0  # nothing reaches 0.99
    assert points[0].coverage > 0
    assert choice.met
    assert choice.threshold in (0.8, 0.895)


def test_the_calibrate_command_prints_the_settings_to_use(
    tmp_path: Path, database_url: str
) -> None:
    faq = write_jsonl(
        tmp_path / "faq.jsonl",
        [
            {
                "id": "fee",
                "question": "Học phí chương trình chuẩn là bao nhiêu?",
                "answer": "32 triệu.",
            },
            {
                "id": "dorm",
                "question": "Phí ký túc xá mỗi tháng là bao nhiêu?",
                "answer": "500 nghìn.",
            },
        ],
    )
    queries = write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {
                "query": "Học phí chương trình chuẩn bao nhiêu vậy?",
                "expected_faq": "fee",
                "kind": "paraphrase",
            },
            {
                "query": "Phí ở ký túc xá một tháng bao nhiêu?",
                "expected_faq": "dorm",
                "kind": "paraphrase",
            },
            {"query": "Giá vé xem phim cuối tuần?", "expected_faq": None, "kind": "out_of_scope"},
        ],
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "calibrate",
            str(faq),
            str(queries),
            "--server-url",
            database_url,
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    # One line per fitted risk target; no t_faq to set (tier 1's threshold calibrates itself).
    assert "risk 0.01: threshold " in result.output
    assert "TUVAN_ANSWER__T_FAQ" not in result.output
    stored = json.loads((out / "report.json").read_text("utf-8"))
    risks = [row["risk"] for row in stored["faq"]]
    assert risks == sorted(risks)
    assert 0.01 in risks
    for row in stored["faq"]:
        assert 0 <= row["precision"] <= 1
        assert 0 <= row["coverage"] <= 1
    assert (out / "faq_precision_coverage.png").stat().st_size > 0
