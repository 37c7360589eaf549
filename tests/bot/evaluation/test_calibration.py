"""Calibrating thresholds: T_DOC swept over the answerer, and ``tuvan eval calibrate``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bot.answer.parts import AnswererParts
from bot.cli.group import cli
from bot.evaluation.calibration import calibrate_t_doc
from bot.evaluation.data import read_passages, read_questions
from bot.evaluation.questions import (
    Knowledge,
)
from tests.bot.evaluation._support import PASSAGES, QUESTIONS, write_jsonl


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
