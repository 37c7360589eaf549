"""The ``tuvan eval questions`` command's refusals: a bad file line, not one knowledge source."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bot.cli.group import cli
from tests.bot.evaluation._support import PASSAGES, QUESTIONS, write_jsonl


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
