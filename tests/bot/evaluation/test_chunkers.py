"""``tuvan eval questions --chunker NAME --no-context-header`` change what is measured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.answer.parts import AnswererParts
from bot.cli.commands.evaluate import questions as eval_questions_cli
from bot.cli.group import cli
from bot.core.errors import RetrievalError
from bot.core.types import CHUNKER_MODES
from bot.evaluation.data import read_passages, read_questions
from bot.evaluation.questions import Knowledge, evaluate_questions

SECTION = " ".join(["Thí sinh nộp hồ sơ xét tuyển trực tuyến trên cổng của trường."] * 8)
# Three level-3 sections of ~110 tokens: the structure chunker packs up to 280 tokens (two
# chunks), the Markdown chunker splits at a level-3 heading only past 300 tokens (one chunk).
PAGE = "# Hướng dẫn\n\n" + "\n\n".join(f"### Bước {n}\n{SECTION}" for n in (1, 2, 3))
DORM = "# Ký túc xá\n\nPhòng bốn người, phí ở 500.000 đồng mỗi tháng, có điều hòa.\n"
FEES = "# Học phí\n\nChương trình chuẩn thu 32.000.000 đồng mỗi năm học.\n"
QUESTIONS = [
    {
        "id": "q1",
        "question": "Ký túc xá giá bao nhiêu?",
        "type": "factoid",
        "answer": "500.000 đồng mỗi tháng",
        "sources": [{"source": "ky-tuc-xa.md", "page": None}],
        "key_facts": ["500.000"],
    }
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "huong-dan.md").write_text(PAGE, encoding="utf-8")
    (folder / "ky-tuc-xa.md").write_text(DORM, encoding="utf-8")
    (folder / "hoc-phi.md").write_text(FEES, encoding="utf-8")
    return folder


async def test_the_chunker_option_decides_how_the_corpus_is_cut(
    tmp_path: Path, corpus: Path, parts: AnswererParts, database_url: str
) -> None:
    questions = read_questions(write_jsonl(tmp_path / "q.jsonl", QUESTIONS))
    loaded = {}
    for chunker in ("structure", "markdown"):
        evaluation = await evaluate_questions(
            parts,
            questions,
            Knowledge(corpus=corpus, chunker=chunker),
            modes=["keyword"],
            ks=(1,),
            server_url=database_url,
        )
        loaded[chunker] = evaluation.loaded
    assert loaded["structure"]["chunker"] == "structure"
    assert loaded["markdown"]["chunker"] == "markdown"
    # The guide is two chunks for one chunker and one for the other; the other files one each.
    assert loaded["structure"]["chunks"] == 4
    assert loaded["markdown"]["chunks"] == 3


async def test_without_the_contextual_header_a_title_no_longer_finds_its_chunk(
    tmp_path: Path, corpus: Path, parts: AnswererParts, database_url: str
) -> None:
    questions = read_questions(write_jsonl(tmp_path / "q.jsonl", QUESTIONS))
    hits = {}
    for header in (True, False):
        evaluation = await evaluate_questions(
            parts,
            questions,
            Knowledge(corpus=corpus, context_header=header),
            modes=["keyword"],
            ks=(1,),
            server_url=database_url,
        )
        hits[header] = evaluation.metrics("keyword", "document")["hit@1"]
        assert ("context_header" in evaluation.loaded) is not header
    # "Ký túc xá" is only in the page title, which reaches the keyword index through the header.
    assert hits == {True: 1.0, False: 0.0}


async def test_a_chunker_for_pre_cut_passages_is_refused(
    tmp_path: Path, parts: AnswererParts, database_url: str
) -> None:
    passages = read_passages(
        write_jsonl(tmp_path / "p.jsonl", [{"id": "p1", "source": "a.md", "text": "Học phí."}])
    )
    with pytest.raises(RetrievalError, match="pre-cut passages"):
        await evaluate_questions(
            parts,
            read_questions(write_jsonl(tmp_path / "q.jsonl", QUESTIONS)),
            Knowledge(passages=passages, chunker="markdown"),
            modes=["keyword"],
            server_url=database_url,
        )


def test_the_command_reports_the_chunker_and_header_it_measured(
    tmp_path: Path, corpus: Path, database_url: str
) -> None:
    questions = write_jsonl(tmp_path / "q.jsonl", QUESTIONS)
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "questions",
            str(questions),
            "--corpus",
            str(corpus),
            "--chunker",
            "markdown",
            "--no-context-header",
            "--mode",
            "keyword",
            "--server-url",
            database_url,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "chunker markdown" in result.output
    assert "context_header off" in result.output


def test_the_command_refuses_a_chunker_for_passages_and_unknown_names(tmp_path: Path) -> None:
    questions = write_jsonl(tmp_path / "q.jsonl", QUESTIONS)
    passages = write_jsonl(tmp_path / "p.jsonl", [{"id": "p1", "text": "Học phí."}])
    result = CliRunner().invoke(
        cli, ["eval", "questions", str(questions), "--chunks", str(passages), "--chunker", "legal"]
    )
    assert result.exit_code == 2
    assert "--chunker cuts a --corpus folder" in result.output
    result = CliRunner().invoke(
        cli, ["eval", "questions", str(questions), "--chunks", str(passages), "--chunker", "x"]
    )
    assert result.exit_code == 2
    assert "'x' is not one of" in result.output


def test_the_command_offers_every_chunker() -> None:
    assert eval_questions_cli.CHUNKERS == CHUNKER_MODES
