"""A real ``tuvan eval questions`` run on a throwaway database, and the report it writes."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.answer.parts import AnswererParts
from bot.answer.replies import answer_body
from bot.core.errors import RetrievalError
from bot.evaluation.data import read_passages, read_questions
from bot.evaluation.questions import (
    Knowledge,
    QuestionsEvaluation,
    evaluate_questions,
)
from bot.evaluation.questions_report import questions_plots, questions_report
from bot.evaluation.report import write_json
from tests.bot.evaluation._support import PASSAGES, QUESTIONS, write_jsonl


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
