"""Dialogues asked as students ask them (1/4): `tuvan eval dialogues FILE`.

Each session's questions go, in order and from one visitor, through the web chat's own API
(``POST /api/chat`` on 127.0.0.1, the real app over a throwaway database holding the knowledge),
so that they are read in their conversation exactly as a student's would be. A reply is
**correct** when it holds every expected fact (folded, as the datasets README scores), lines
that only repeat the student's words (a multi-part answer's headings) left aside; for a question
the knowledge does not answer (``not_in_kb``), when it is the fallback. **Confidently wrong**:
neither correct nor a fallback — the worse failure.

Two file shapes are read: ``../shared/datasets/demo-dialogues`` (``session``, ``follow_of``,
``expected_facts``, ``kind``) and tests/data/demo_dialogues.jsonl (``previous``: the earlier
questions of a follow-up, asked first in its session and not scored; ``key_facts``; ``type``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.citations import SOURCES_HEADING
from bot.core.errors import DatasetError
from bot.evaluation.metrics import facts_found, norm

KINDS = ("answerable", "followup", "not_in_kb", "english")


@dataclass(frozen=True)
class DialogueTurn:
    id: str
    question: str
    expected_facts: tuple[str, ...]
    kind: str
    session: str
    follow_of: str | None = None
    previous: tuple[str, ...] = ()  # asked before it in its session, not scored

    @property
    def in_kb(self) -> bool:
        return self.kind != "not_in_kb"


def read_dialogues(path: Path) -> list[DialogueTurn]:
    """Either shape (see the module docstring); a line that is neither stops the run."""
    out: list[DialogueTurn] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(_turn(row, number))
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{path}:{number}: not a dialogue row ({exc})") from exc
    if not out:
        raise DatasetError(f"{path}: no dialogue rows")
    return out


def _turn(row: dict[str, Any], number: int) -> DialogueTurn:
    question = str(row["question"])
    if "session" in row:
        kind = str(row["kind"])
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}")
        return DialogueTurn(
            str(row["id"]),
            question,
            tuple(str(f) for f in row.get("expected_facts") or ()),
            kind,
            str(row["session"]),
            row.get("follow_of"),
        )
    previous = tuple(str(q) for q in row.get("previous") or ())
    kind = (
        "not_in_kb"
        if row.get("type") == "out_of_scope"
        else "followup"
        if previous
        else "answerable"
    )
    return DialogueTurn(
        str(row["id"]),
        question,
        tuple(str(f) for f in row.get("key_facts") or ()),
        kind,
        f"row-{number}",  # each its own session, its previous questions asked first
        None,
        previous,
    )


def as_question_rows(turns: Sequence[DialogueTurn], prefix: str = "") -> list[dict[str, Any]]:
    """Dialogue turns as rows of a question set (``bot.evaluation.data.read_questions``), for
    measuring tier 2 on them (``bench/answer_shape.py``, set ``probes``): each turn's earlier
    questions (``previous``) are its session's turns before it, or the row's own; a question
    the knowledge does not answer is out of scope."""
    rows: list[dict[str, Any]] = []
    asked: dict[str, list[str]] = {}
    for t in turns:
        earlier = asked.setdefault(t.session, [])
        rows.append(
            {
                "id": f"{prefix}{t.id}",
                "question": t.question,
                "type": "factoid" if t.in_kb else "out_of_scope",
                "key_facts": list(t.expected_facts),
                "previous": list(t.previous or earlier),
            }
        )
        earlier.append(t.question)
    return rows


@dataclass(frozen=True)
class DialogueOutcome:
    turn: DialogueTurn
    tier: str
    answer: str
    correct: bool
    reading: dict[str, Any] | None = None
    confidence: float | None = None
    found: int = 0  # expected facts in the reply
    reason: str = ""  # why the tier answered, or why the ones before it did not

    @property
    def partial(self) -> bool:
        """Confidently wrong, but holding some of the expected facts (a part answered)."""
        return self.confidently_wrong and self.found > 0

    @property
    def fallback(self) -> bool:
        return self.tier == "fallback"

    @property
    def confidently_wrong(self) -> bool:
        return not self.correct and not self.fallback


@dataclass(frozen=True)
class DialogueEvaluation:
    outcomes: list[DialogueOutcome]
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def correct(self) -> int:
        return sum(o.correct for o in self.outcomes)

    @property
    def confidently_wrong(self) -> int:
        return sum(o.confidently_wrong for o in self.outcomes)

    @property
    def fallbacks(self) -> int:
        return sum(o.fallback and not o.correct for o in self.outcomes)

    @property
    def partial(self) -> int:
        return sum(o.partial for o in self.outcomes)


def score(turn: DialogueTurn, tier: str, answer: str) -> bool:
    if not turn.in_kb:
        return tier == "fallback"
    if tier == "fallback" or not turn.expected_facts:
        return False
    return found_facts(turn, answer) == len(turn.expected_facts)


def found_facts(turn: DialogueTurn, answer: str) -> int:
    """The expected facts in the reply's body (the student's own words echoed do not count)."""
    if not turn.expected_facts:
        return 0
    return facts_found(_body(answer, turn.question), turn.expected_facts)


def _body(answer: str, question: str) -> str:
    """The reply without its sources and without lines that only repeat the question's words
    (a heading such as "hoc phi nganh cntt bn:")."""
    for heading in SOURCES_HEADING.values():
        answer = answer.split(f"\n\n{heading}", 1)[0]
    asked = f" {norm(question)} "
    kept = [
        line
        for line in answer.splitlines()
        if not (line.rstrip().endswith(":") and f" {norm(line.rstrip(' :'))} " in asked)
    ]
    return "\n".join(kept)


# -- asking -------------------------------------------------------------------------------

# One message of a session through the web chat: (visitor id, text) → the ``done`` payload and
# the stored reply's ``details`` (bot.web.dialogues serves the app and asks it).
Ask = Callable[[str, str], Awaitable[tuple[dict[str, Any], dict[str, Any]]]]


async def ask_dialogues(
    turns: Sequence[DialogueTurn], ask: Ask, on_turn: Callable[[int], None] | None = None
) -> DialogueEvaluation:
    """Every turn asked in session order, one visitor a session; each scored."""
    outcomes: list[DialogueOutcome] = []
    visitors: dict[str, str] = {}
    for turn in turns:
        visitor = visitors.setdefault(turn.session, f"eval-{uuid.uuid4().hex[:12]}")
        for earlier in turn.previous:
            await ask(visitor, earlier)
        done, details = await ask(visitor, turn.question)
        tier = str(done.get("tier") or "fallback")
        answer = str(done.get("answer") or "")
        outcomes.append(
            DialogueOutcome(
                turn,
                tier,
                answer,
                score(turn, tier, answer),
                details.get("reading"),
                details.get("confidence"),
                found_facts(turn, answer) if tier != "fallback" else 0,
                str(details.get("reason") or ""),
            )
        )
        if on_turn is not None:
            on_turn(1)
    by_kind: dict[str, dict[str, int]] = {}
    for o in outcomes:
        counts = by_kind.setdefault(
            o.turn.kind, {"questions": 0, "correct": 0, "confidently_wrong": 0, "fallback": 0}
        )
        counts["questions"] += 1
        counts["correct"] += o.correct
        counts["confidently_wrong"] += o.confidently_wrong
        counts["fallback"] += o.fallback and not o.correct
    return DialogueEvaluation(outcomes, by_kind)


def dialogues_report(ev: DialogueEvaluation, name: str) -> tuple[dict[str, Any], str]:
    """The JSON data and the Markdown: totals, by kind, and every reply not correct."""
    n = len(ev.outcomes)
    data = {
        "questions": n,
        "correct": ev.correct,
        "confidently_wrong": ev.confidently_wrong,
        "partial": ev.partial,
        "fallback": ev.fallbacks,
        "by_kind": ev.by_kind,
        "outcomes": [
            {
                "id": o.turn.id,
                "question": o.turn.question,
                "kind": o.turn.kind,
                "tier": o.tier,
                "correct": o.correct,
                "confidently_wrong": o.confidently_wrong,
                "expected_facts": list(o.turn.expected_facts),
                "reading": o.reading,
                "confidence": o.confidence,
                "reason": o.reason,
                "answer": o.answer,
            }
            for o in ev.outcomes
        ],
    }
    lines = [
        f"# Dialogues: {name}",
        "",
        f"{ev.correct}/{n} correct, **{ev.confidently_wrong} confidently wrong** "
        f"({ev.partial} of them answer part of what was asked), "
        f"{ev.fallbacks} fallbacks that should have answered.",
        "",
        "| kind | questions | correct | confidently wrong | fallback |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {k} | {c['questions']} | {c['correct']} | {c['confidently_wrong']} "
            f"| {c['fallback']} |"
            for k, c in ev.by_kind.items()
        ),
        "",
        "## Replies not correct",
    ]
    for o in ev.outcomes:
        if o.correct:
            continue
        label = "CONFIDENTLY WRONG" if o.confidently_wrong else "fallback"
        if o.partial:
            label += f" (part answered: {o.found}/{len(o.turn.expected_facts)} facts)"
        read = o.reading or {}
        how = (
            f"read with context: {read.get('asked')!r}"
            if read.get("mode") == "context"
            else "read alone"
        )
        lines += [
            "",
            f"### {o.turn.id} ({o.turn.kind}) — {label}, tier {o.tier}",
            "",
            f"- question: {o.turn.question!r}; {how}",
            f"- expected: {', '.join(o.turn.expected_facts) or '(the fallback)'}",
            f"- confidence: {o.confidence}; why: {o.reason or '(not said)'}",
            "",
            "```",
            o.answer.strip(),
            "```",
        ]
    return data, "\n".join(lines) + "\n"
