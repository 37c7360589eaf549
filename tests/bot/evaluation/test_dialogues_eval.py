"""`tuvan eval dialogues` (1/4): a dialogue file asked in session order through the real web chat
on 127.0.0.1 over a throwaway database, each reply scored and reported."""

from __future__ import annotations

import json
from pathlib import Path

from bot.answer.parts import AnswererParts
from bot.evaluation.data import read_questions
from bot.evaluation.dialogues import (
    DialogueEvaluation,
    DialogueOutcome,
    DialogueTurn,
    as_question_rows,
    dialogues_report,
    read_dialogues,
)
from bot.evaluation.workspace import Workspace, indexer_for
from bot.web.dialogues import dialogues_through_web_chat
from retrieval.index.faq_entries import FaqDraft, upsert_faq

FEE = "Học phí chương trình chuẩn năm 2026 là bao nhiêu?"
ROWS = [
    {"id": "d1", "question": FEE, "expected_facts": ["32.500.000"], "kind": "answerable"},
    {"id": "d2", "question": "Thời tiết Đà Lạt cuối tuần thế nào?", "kind": "not_in_kb"},
    {"id": "d3", "question": "Trường có nuôi mèo không?", "expected_facts": ["3 con"]},
]


def _write(path: Path) -> Path:
    lines = [
        json.dumps({"kind": "answerable", **row, "session": 1}, ensure_ascii=False) for row in ROWS
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_a_dialogue_file_is_asked_through_the_web_chat_and_scored(
    parts: AnswererParts, database_url: str, tmp_path: Path
) -> None:
    async def load(workspace: Workspace) -> None:
        async with workspace.sessionmaker.begin() as session:
            await upsert_faq(
                session,
                indexer_for(parts),
                FaqDraft(question=FEE, answer="Học phí chuẩn năm 2026 là 32.500.000 đồng/năm."),
            )

    turns = read_dialogues(_write(tmp_path / "d.jsonl"))
    evaluation = await dialogues_through_web_chat(parts, turns, load=load, server_url=database_url)
    by_id = {o.turn.id: o for o in evaluation.outcomes}
    # The FAQ question word for word: its entry, verbatim, through POST /api/chat.
    assert (by_id["d1"].tier, by_id["d1"].correct) == ("faq", True)
    assert by_id["d1"].confidence is not None  # the stored reply's details were read
    # Nothing about the weather or cats: the fallback, right for one, a miss for the other.
    assert (by_id["d2"].tier, by_id["d2"].correct) == ("fallback", True)
    # It names nothing the vocabulary reads, so the fee question's topic was tried in front;
    # the fee answer holds none of its words ("thời tiết", "Đà Lạt"): read alone after all.
    assert by_id["d2"].reading is not None
    assert (by_id["d2"].reading["mode"], by_id["d2"].reading["stopped"]) == ("alone", "new_topic")
    assert (by_id["d3"].tier, by_id["d3"].correct) == ("fallback", False)
    assert by_id["d3"].reason  # why no tier answered, from the stored reply's details
    assert (evaluation.correct, evaluation.confidently_wrong, evaluation.fallbacks) == (2, 0, 1)
    data, markdown = dialogues_report(evaluation, "d.jsonl")
    assert data["by_kind"]["not_in_kb"] == {
        "questions": 1,
        "correct": 1,
        "confidently_wrong": 0,
        "fallback": 0,
    }
    assert markdown.startswith("# Dialogues: d.jsonl\n\n2/3 correct, **0 confidently wrong**")
    assert "### d3 (answerable) — fallback, tier fallback" in markdown
    assert f"why: {by_id['d3'].reason}" in markdown
    assert data["outcomes"][2]["reason"] == by_id["d3"].reason


def test_a_reply_with_some_expected_facts_is_reported_as_a_part_answered() -> None:
    turn = DialogueTurn("p1", "hp và hạn nộp?", ("16.250.000", "28/8/2026"), "answerable", "s")
    partial = DialogueOutcome(turn, "documents", "16.250.000 đồng", False, found=1)
    wrong = DialogueOutcome(turn, "documents", "14/9/2026", False, found=0)
    assert partial.confidently_wrong
    assert partial.partial
    assert not wrong.partial
    _, markdown = dialogues_report(DialogueEvaluation([partial, wrong]), "x")
    assert "**2 confidently wrong** (1 of them answer part of what was asked)" in markdown
    assert "CONFIDENTLY WRONG (part answered: 1/2 facts)" in markdown


async def test_a_dialogue_file_longer_than_every_default_burst_is_asked_whole(
    parts: AnswererParts, database_url: str, tmp_path: Path
) -> None:
    bursts = parts.settings.limits
    count = max(bursts.chat_ip_burst, bursts.chat_network_burst, bursts.reads_ip_burst) + 2
    path = tmp_path / "long.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"q{n}", "question": FEE, "kind": "not_in_kb", "session": n}) + "\n"
            for n in range(count)
        ),
        encoding="utf-8",
    )

    async def nothing(workspace: Workspace) -> None:
        """An empty store: what is tested is that every question gets through, not answered."""

    evaluation = await dialogues_through_web_chat(
        parts, read_dialogues(path), load=nothing, server_url=database_url
    )
    assert len(evaluation.outcomes) == count  # no 429 from a bucket the evaluation forgot


def test_dialogue_turns_become_a_question_set_with_their_sessions_earlier_questions(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": "a1", "question": FEE, "expected_facts": ["32.500.000"], "session": 1},
        {"id": "b1", "question": "KTX bao nhiêu một tháng?", "expected_facts": ["1.200.000"]},
        {"id": "a2", "question": "còn clc thì sao", "expected_facts": ["45.000.000"], "session": 1},
        {"id": "a3", "question": "Trường có nuôi mèo không?", "kind": "not_in_kb", "session": 1},
    ]
    path = tmp_path / "d.jsonl"
    lines = [
        json.dumps({"kind": "answerable", "session": 2, **r}, ensure_ascii=False) for r in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    own = tmp_path / "own.jsonl"
    own.write_text(
        json.dumps({"id": "o1", "question": "còn clc?", "previous": [FEE], "key_facts": ["4"]})
        + "\n",
        encoding="utf-8",
    )

    got = as_question_rows(read_dialogues(path), "p:") + as_question_rows(read_dialogues(own))
    by_id = {r["id"]: r for r in got}
    assert list(by_id) == ["p:a1", "p:b1", "p:a2", "p:a3", "o1"]
    # Only the turns of its own session before it, oldest first; the other session's not.
    assert [by_id[i]["previous"] for i in ("p:a1", "p:b1", "p:a2")] == [[], [], [FEE]]
    assert by_id["p:a3"]["previous"] == [FEE, "còn clc thì sao"]
    assert (by_id["p:a3"]["type"], by_id["p:a3"]["key_facts"]) == ("out_of_scope", [])
    assert (by_id["p:a2"]["type"], by_id["p:a2"]["key_facts"]) == ("factoid", ["45.000.000"])
    # A row that lists its earlier questions keeps them.
    assert by_id["o1"]["previous"] == [FEE]
    # And the rows read back as a question set.
    out = tmp_path / "q.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in got), "utf-8")
    questions = read_questions(out)
    assert [q.out_of_scope for q in questions] == [False, False, False, True, False]
