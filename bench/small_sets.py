"""The small inputs of the benches' ``--quick`` runs: a set's first questions and only the
knowledge they cite.

A ``--quick`` run is the smoke test CI runs on every push (``bench/quick.py``): it goes through
the code of the full run, but on so little that it takes seconds. Indexing a whole corpus does
not (the UIT corpus alone takes over a minute on two cores), so a quick run keeps the first few
questions of a set and loads only the files or passages those questions cite, with a few more
as distractors. The figures it prints mean nothing; that it runs to the end is the point.

    from small_sets import cited_corpus, cited_passages, first_questions, faq_sample
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

from common import CACHE_DIR

from bot.evaluation.data import FaqItem, FaqQuery, Passage, Question
from bot.knowledge.ingest import expand_paths

QUESTIONS = 6  # a set's first questions
FILES = 3  # corpus files loaded at most
DISTRACTORS = 12  # passages loaded beside the cited ones
FAQ_ENTRIES = 6
QUERIES_PER_KIND = 3  # paraphrases, near misses, out of scope
SMALL_DIR = CACHE_DIR / "quick"


def first_questions(questions: Sequence[Question], n: int = QUESTIONS) -> list[Question]:
    """The first ``n`` questions, and the set's first out-of-scope one if none is among them
    (the fallback is a path of its own)."""
    kept = list(questions[:n])
    if not any(q.out_of_scope for q in kept):
        kept += [q for q in questions[n:] if q.out_of_scope][:1]
    return kept


def cited_corpus(corpus: Path, questions: Sequence[Question], most: int = FILES) -> Path:
    """A folder with the files of ``corpus`` the questions cite (the first ``most`` of them; the
    folder's first files when they cite none), under bench/.cache/quick, made once."""
    files = {p.name: p for p in expand_paths([corpus])}
    names = [s.source for q in questions for s in q.sources if s.source in files]
    chosen = list(dict.fromkeys(names))[:most] or sorted(files)[:most]
    digest = hashlib.sha256(str(corpus.resolve()).encode())
    for name in chosen:
        stat = files[name].stat()
        digest.update(f"\0{name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    folder = SMALL_DIR / f"{corpus.parent.name}-{digest.hexdigest()[:12]}"
    if not folder.is_dir():
        building = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        for name in chosen:
            shutil.copy2(files[name], building / name)
        building.rename(folder)
    return folder


def cited_passages(
    passages: Sequence[Passage], questions: Sequence[Question], distractors: int = DISTRACTORS
) -> list[Passage]:
    """The passages the questions name as relevant, and the first ``distractors`` others, in
    the file's order."""
    cited = {i for q in questions for i in q.relevant_ids}
    extra = [p.id for p in passages if p.id not in cited][:distractors]
    kept = cited | set(extra)
    return [p for p in passages if p.id in kept]


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
