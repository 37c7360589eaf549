"""Reading questions and passages for ``tuvan eval questions``: fields kept, bad lines named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.core.errors import DatasetError
from bot.evaluation.data import read_passages, read_questions
from tests.bot.evaluation._support import PASSAGES, QUESTIONS, write_jsonl


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
