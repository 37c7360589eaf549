"""The evaluation files: questions, pre-cut passages, FAQ entries and FAQ-matching queries.

One JSON object per line (UTF-8). A line that is not valid JSON, or lacks a required field,
stops the run with the file and line named: numbers measured on a half-read file would mislead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.errors import DatasetError

QUESTION_TYPES = ("factoid", "procedural", "conditional", "multi_hop", "out_of_scope")
QUERY_KINDS = ("paraphrase", "near_miss", "out_of_scope")


@dataclass(frozen=True)
class SourceRef:
    source: str  # a file name, compared with the name of the file a chunk came from
    page: int | None = None


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    type: str = "factoid"
    answer: str = ""
    relevant_ids: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    key_facts: tuple[str, ...] = ()

    @property
    def out_of_scope(self) -> bool:
        return self.type == "out_of_scope"


@dataclass(frozen=True)
class Passage:
    id: str
    text: str
    source: str | None = None
    page: int | None = None
    title: str | None = None


@dataclass(frozen=True)
class FaqItem:
    id: str
    question: str
    answer: str
    source: str | None = None
    variants: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class FaqQuery:
    query: str
    expected_faq: str | None
    kind: str
    confusable_with: str | None = None
    # Further entries that answer it as well (the same staff answer, or one containing it).
    also_correct: tuple[str, ...] = ()

    def answered_by(self, faq_id: str | None) -> bool:
        """Whether answering with ``faq_id`` is right (the expected entry or an also correct
        one); never for an abstention."""
        return faq_id is not None and (faq_id == self.expected_faq or faq_id in self.also_correct)


def json_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON Lines file with their line numbers, or DatasetError naming
    the first line that is not one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not UTF-8 text") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise DatasetError(f"{path}:{number}: expected a JSON object")
        yield number, row


def _text(row: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise DatasetError(f"{where}: `{key}` must be a non-empty string")
    return value


def _page(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DatasetError(f"{where}: `page` must be an integer or null")
    return value


def _strings(row: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = row.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _unique(ids: list[str], path: Path, what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DatasetError(f"{path}: {what} id {i!r} appears twice")
        seen.add(i)


def read_questions(path: Path) -> list[Question]:
    out: list[Question] = []
    for number, row in json_rows(path):
        where = f"{path}:{number}"
        qtype = row.get("type") or "factoid"
        if qtype not in QUESTION_TYPES:
            raise DatasetError(f"{where}: `type` must be one of {', '.join(QUESTION_TYPES)}")
        sources = row.get("sources") or []
        if not isinstance(sources, list):
            raise DatasetError(f"{where}: `sources` must be a list")
        refs = []
        for s in sources:
            if not isinstance(s, dict) or not isinstance(s.get("source"), str):
                raise DatasetError(f"{where}: each source needs a `source` file name")
            refs.append(SourceRef(s["source"], _page(s.get("page"), where)))
        out.append(
            Question(
                id=str(row.get("id") or f"line-{number}"),
                question=_text(row, "question", where),
                type=qtype,
                answer=_text(row, "answer", where, required=False),
                relevant_ids=_strings(row, "relevant_ids", where),
                sources=tuple(refs),
                key_facts=_strings(row, "key_facts", where),
            )
        )
    if not out:
        raise DatasetError(f"{path}: no questions")
    _unique([q.id for q in out], path, "question")
    return out


def read_passages(path: Path) -> list[Passage]:
    out: list[Passage] = []
    for number, row in json_rows(path):
        where = f"{path}:{number}"
        pid = row.get("chunk_id", row.get("id"))
        if not isinstance(pid, str | int) or isinstance(pid, bool) or str(pid) == "":
            raise DatasetError(f"{where}: a passage needs `chunk_id` or `id`")
        out.append(
            Passage(
                id=str(pid),
                text=_text(row, "text", where),
                source=row.get("source") if isinstance(row.get("source"), str) else None,
                page=_page(row.get("page"), where),
                title=row.get("title") if isinstance(row.get("title"), str) else None,
            )
        )
    if not out:
        raise DatasetError(f"{path}: no passages")
    _unique([p.id for p in out], path, "passage")
    return out


def read_faq_items(path: Path) -> list[FaqItem]:
    out: list[FaqItem] = []
    for number, row in json_rows(path):
        where = f"{path}:{number}"
        out.append(
            FaqItem(
                id=_text(row, "id", where),
                question=_text(row, "question", where),
                answer=_text(row, "answer", where),
                source=row.get("source") if isinstance(row.get("source"), str) else None,
                variants=_strings(row, "variants", where),
            )
        )
    if not out:
        raise DatasetError(f"{path}: no FAQ entries")
    _unique([f.id for f in out], path, "FAQ")
    return out


def read_faq_queries(path: Path, faq_ids: set[str] | None = None) -> list[FaqQuery]:
    out: list[FaqQuery] = []
    for number, row in json_rows(path):
        where = f"{path}:{number}"
        kind = row.get("kind")
        if kind not in QUERY_KINDS:
            raise DatasetError(f"{where}: `kind` must be one of {', '.join(QUERY_KINDS)}")
        expected = row.get("expected_faq")
        if expected is not None and not isinstance(expected, str):
            raise DatasetError(f"{where}: `expected_faq` must be an FAQ id or null")
        if faq_ids is not None and expected is not None and expected not in faq_ids:
            raise DatasetError(f"{where}: `expected_faq` {expected!r} is not in the FAQ file")
        if kind == "paraphrase" and expected is None:
            raise DatasetError(f"{where}: a paraphrase needs its `expected_faq`")
        confusable = row.get("confusable_with")
        also = row.get("also_correct") or []
        if not isinstance(also, list) or not all(isinstance(a, str) for a in also):
            raise DatasetError(f"{where}: `also_correct` must be a list of FAQ ids")
        out.append(
            FaqQuery(
                query=_text(row, "query", where),
                expected_faq=expected,
                kind=kind,
                confusable_with=confusable if isinstance(confusable, str) else None,
                also_correct=tuple(also),
            )
        )
    if not out:
        raise DatasetError(f"{path}: no queries")
    return out
