"""The development question sets the benches evaluate on (each set's questions, its knowledge as a
corpus or passages, its FAQ) and what a quick run takes of them: a few questions and only the
knowledge they need."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from small_sets import faq_sample, small_corpus, small_passages

from bot.evaluation.data import Question, read_faq_items, read_passages, read_questions
from bot.evaluation.questions import Knowledge
from bot.evaluation.workspace import Workspace, load_corpus, load_faq
from bot.knowledge.demo import demo_kb_dir

MODES = ("dense", "bm25", "hybrid")


@dataclass(frozen=True)
class QuestionSet:
    name: str
    questions: Path | None  # None: an FAQ set only (UTEHY)
    corpus: Path | None = None  # a folder for tuvan's pipeline
    chunks: Path | None = None  # pre-cut passages
    faq: Path | None = None
    faq_queries: Path | None = None


def dev_sets(root: Path) -> list[QuestionSet]:
    uit, alqac, virhe = root / "uit-admissions", root / "alqac", root / "virhe4qa"
    utehy = root / "utehy-fanpage"
    return [
        QuestionSet(
            "UIT",
            uit / "questions.jsonl",
            corpus=uit / "corpus",
            faq=uit / "faq.jsonl",
            faq_queries=uit / "faq_queries.jsonl",
        ),
        QuestionSet("ALQAC", alqac / "questions.jsonl", chunks=alqac / "corpus.jsonl"),
        QuestionSet(
            "ViRHE4QA",
            virhe / "questions.jsonl",
            chunks=virhe / "corpus.jsonl",
            faq=virhe / "faq.jsonl",
            faq_queries=virhe / "faq_queries.jsonl",
        ),
        QuestionSet(
            "UTEHY",
            None,
            faq=utehy / "faq.jsonl",
            faq_queries=utehy / "faq_queries.jsonl",
        ),
    ]


def knowledge_for(
    qs: QuestionSet, questions: list[Question], quick: bool, n: int = 5
) -> tuple[list[Question], Knowledge]:
    """The set's knowledge for ``questions``; ``quick``: the first ``n`` questions whose cited
    files or passages are small, and only those."""
    passages = read_passages(qs.chunks) if qs.chunks else None
    corpus = qs.corpus
    if quick and passages is not None:
        questions, passages = small_passages(questions, passages, n)
    elif quick and corpus is not None:
        questions, corpus = small_corpus(questions, corpus, n)
    return questions, Knowledge(corpus=corpus, passages=passages)


def small_demo(parts: Any) -> Callable[[Workspace], Awaitable[None]]:
    """A loader of the few demo files and FAQ entries the demo's first questions need: what a
    quick run of the dialogues asks over instead of the whole demo knowledge base."""

    async def load(workspace: Workspace) -> None:
        demo = demo_kb_dir()
        _, folder = small_corpus(read_questions(demo / "questions.jsonl"), demo / "docs")
        await load_corpus(workspace, parts, folder)
        await load_faq(workspace, parts, faq_sample(read_faq_items(demo / "faq.jsonl"), [])[0])

    return load


def knowledge_texts(qs: QuestionSet) -> list[str]:
    texts: list[str] = []
    if qs.corpus is not None:
        texts += [
            p.read_text(encoding="utf-8", errors="replace") for p in sorted(qs.corpus.iterdir())
        ]
    if qs.chunks is not None:
        texts += [f"{p.title or ''}\n{p.text}" for p in read_passages(qs.chunks)]
    if qs.faq is not None:
        texts += [f"{i.question}\n{i.answer}" for i in read_faq_items(qs.faq)]
    return texts
