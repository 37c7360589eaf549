"""The probe (tests/data/probe_dialogues.jsonl): 40 student messages on the demo knowledge base,
written blind on 2026-12-06 (before any of them was asked) to measure what nobody tuned for;
`tuvan eval dialogues tests/data/probe_dialogues.jsonl` asks them. Its facts must be the
knowledge base's, or a right answer could never hold them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bot.evaluation.dialogues import read_dialogues
from retrieval.text.folding import fold

ROOT = Path(__file__).resolve().parents[3]
PROBE = ROOT / "tests" / "data" / "probe_dialogues.jsonl"
KB = ROOT / "bot" / "knowledge" / "demo_kb"


def _kb_text() -> str:
    texts = [p.read_text(encoding="utf-8") for p in sorted((KB / "docs").glob("*.md"))]
    texts.append((KB / "faq.jsonl").read_text(encoding="utf-8"))
    return fold("\n".join(texts)).lower()


def test_every_expected_fact_is_in_the_knowledge_base() -> None:
    kb = _kb_text()
    turns = read_dialogues(PROBE)
    assert len(turns) == 40
    missing = [
        (t.id, f)
        for t in turns
        for f in t.expected_facts
        if fold(f).lower() not in kb and t.id != "p30"  # p30: the catalogue's plain no
    ]
    assert missing == []


def test_the_probe_mixes_what_students_send() -> None:
    turns = read_dialogues(PROBE)
    kinds = Counter(t.kind for t in turns)
    assert kinds["followup"] >= 4
    assert kinds["not_in_kb"] >= 3
    assert kinds["english"] >= 3
    assert sum(t.question.isascii() for t in turns) >= 15  # typed without diacritics
