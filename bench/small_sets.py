"""The small inputs of the benches' ``--quick`` runs: a set's first questions and only the
knowledge they cite.

A ``--quick`` run is the smoke test CI runs on every push (``bench/quick.py``): it goes through
the code of the full run, but on so little that it takes seconds. What costs is embedding
passages (e5-small on two cores: about a second per few thousand tokens), so a quick run keeps
the first questions of a set whose cited files or passages fit in a few kilobytes, and loads
only those. The figures it prints mean nothing; that it runs to the end is the point.

    questions, corpus = small_corpus(read_questions(...), folder)      # a folder of files
    questions, passages = small_passages(read_questions(...), passages)
    items, queries = faq_sample(items, queries)
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common import CACHE_DIR

from bot.evaluation.data import FaqItem, FaqQuery, Passage, Question
from bot.knowledge.ingest import expand_paths

QUESTIONS = 5  # a set's first questions (and its first out-of-scope one)
BUDGET = 4_000  # bytes of knowledge loaded at most
DISTRACTORS = 4  # passages cited by none of the questions, where the budget allows
FAQ_ENTRIES = 5
QUERIES_PER_KIND = 3  # paraphrases, near misses, out of scope
SMALL_DIR = CACHE_DIR / "quick"


def _within(
    questions: Sequence[Question], cites: dict[str, set[str]], size: dict[str, int], n: int
) -> tuple[list[Question], set[str]]:
    """The first ``n`` questions whose cited units (with those of the questions before) fit in
    the budget, and the set's first out-of-scope question: the fallback is a path of its own."""
    kept: list[Question] = []
    units: set[str] = set()
    for q in questions:
        if len(kept) == n:
            break
        wanted = units | cites[q.id]
        if q.out_of_scope or not cites[q.id] or sum(size[u] for u in wanted) > BUDGET:
            continue
        kept.append(q)
        units = wanted
    kept += [q for q in questions if q.out_of_scope][:1]
    return kept, units


def small_corpus(
    questions: Sequence[Question], corpus: Path, n: int = QUESTIONS
) -> tuple[list[Question], Path]:
    """The first questions whose cited files of ``corpus`` fit in the budget, and a folder with
    those files (the smallest file if they cite none), made once under bench/.cache/quick."""
    files = {p.name: p for p in expand_paths([corpus])}
    size = {name: p.stat().st_size for name, p in files.items()}
    cites = {q.id: {s.source for s in q.sources if s.source in files} for q in questions}
    kept, names = _within(questions, cites, size, n)
    chosen = sorted(names) or [min(files, key=lambda name: size[name])]
    return kept, files_folder(corpus.parent.name, [files[name] for name in chosen])


def files_folder(label: str, files: Sequence[Path]) -> Path:
    """A folder holding copies of ``files`` (same names), made once under bench/.cache/quick:
    a corpus of only these files."""
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(f"\0{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return _folder(label, digest, lambda into: [shutil.copy2(p, into / p.name) for p in files])


def text_folder(label: str, texts: dict[str, str]) -> Path:
    """A folder holding a file of each text (``{name: text}``), made once under
    bench/.cache/quick: a corpus of a piece of a file."""
    digest = hashlib.sha256()
    for name, text in texts.items():
        digest.update(f"\0{name}\0{text}".encode())
    return _folder(
        label, digest, lambda into: [(into / n).write_text(t, "utf-8") for n, t in texts.items()]
    )


def _folder(label: str, digest: Any, fill: Callable[[Path], object]) -> Path:
    folder = SMALL_DIR / f"{label}-{digest.hexdigest()[:12]}"
    if not folder.is_dir():
        # A folder of this process's own: two benches (bench/quick.py runs two at a time) may
        # build the same one at once, and the second rename then finds it made.
        building = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        fill(building)
        try:
            building.rename(folder)
        except OSError:
            if not folder.is_dir():
                raise
            shutil.rmtree(building, ignore_errors=True)
    return folder


def small_passages(
    questions: Sequence[Question], passages: Sequence[Passage], n: int = QUESTIONS
) -> tuple[list[Question], list[Passage]]:
    """The first questions whose relevant passages fit in the budget; those passages and a few
    others as distractors, in the file's order."""
    size = {p.id: len(p.text.encode()) for p in passages}
    cites = {q.id: {i for i in q.relevant_ids if i in size} for q in questions}
    kept, ids = _within(questions, cites, size, n)
    room = BUDGET - sum(size[i] for i in ids)
    others: list[str] = []
    for p in passages:
        if len(others) == DISTRACTORS:
            break
        if p.id not in ids and size[p.id] <= room:
            others.append(p.id)
            room -= size[p.id]
    ids |= set(others)
    return kept, [p for p in passages if p.id in ids]


def faq_sample(
    items: Sequence[FaqItem],
    queries: Sequence[FaqQuery],
    entries: int = FAQ_ENTRIES,
    per_kind: int = QUERIES_PER_KIND,
) -> tuple[list[FaqItem], list[FaqQuery]]:
    """The first ``entries`` FAQ entries and, of each kind of query, the first ``per_kind``
    that name no other entry."""
    kept = list(items[:entries])
    ids = {i.id for i in kept}
    related = [
        q for q in queries if q.expected_faq in ids | {None} and q.confusable_with in ids | {None}
    ]
    chosen: set[int] = set()
    for kind in {q.kind for q in related}:
        chosen |= {id(q) for q in [q for q in related if q.kind == kind][:per_kind]}
    return kept, [q for q in related if id(q) in chosen]
