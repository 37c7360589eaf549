"""FAQ files: JSONL, CSV, YAML and Excel workbooks (.xlsx, bot.knowledge.faq_workbook) in the
format of ../shared/datasets/README.md, and the FAQ imported from them and exported to them
(`tuvan faq import|export`, the admin, the demo).

A row has ``question`` and ``answer``; optional ``id`` (kept as the entry's external id, so a
re-import updates instead of duplicating), ``source``, ``source_url``/``url``, ``language``,
``status`` (draft|published, default published) and ``variants`` (list, or ``|``-separated in
CSV and workbooks). A workbook has the CSV's columns.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import selectinload

from bot.core.errors import FaqFileError
from bot.db.models import FaqEntry, FaqStatus
from bot.knowledge.faq_workbook import workbook_bytes, workbook_rows
from bot.knowledge.jobs import Progress
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer

FORMATS = (".jsonl", ".json", ".csv", ".yaml", ".yml", ".xlsx")
WORKBOOK = ".xlsx"
CSV_FIELDS = ["id", "question", "answer", "source", "source_url", "language", "status", "variants"]


def _rows(path: Path) -> list[dict[str, Any]]:
    try:
        if path.suffix.lower() == WORKBOOK:
            return workbook_rows(path.read_bytes(), str(path))
        raw = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise FaqFileError(f"cannot read {path}: {exc}") from exc
    return _parse_rows(raw, path.suffix.lower(), str(path))


def _parse_rows(raw: str, suffix: str, label: str) -> list[dict[str, Any]]:
    try:
        if suffix == ".jsonl":
            return _jsonl_rows(label, raw)
        if suffix == ".json":
            data = json.loads(raw)
            return list(data if isinstance(data, list) else data.get("faq", []))
        if suffix == ".csv":
            return list(csv.DictReader(io.StringIO(raw)))
        if suffix in (".yaml", ".yml"):
            data = yaml.safe_load(raw) or []
            return list(data if isinstance(data, list) else data.get("faq", []))
    except (json.JSONDecodeError, yaml.YAMLError, csv.Error, AttributeError) as exc:
        raise FaqFileError(f"{label} is not valid {suffix[1:].upper()}: {exc}") from exc
    raise FaqFileError(f"{label}: unknown FAQ format (use one of {', '.join(FORMATS)})")


def _jsonl_rows(label: str, raw: str) -> list[Any]:
    # json's own message counts lines and columns within the one line it was given.
    rows = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise FaqFileError(
                f"{label}: line {number} is not valid JSON: {exc.msg} (column {exc.colno})"
            ) from exc
    return rows


def _variants(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split("|") if v.strip()]
    return [str(v).strip() for v in value if str(v).strip()]


def read_faq_file(path: Path) -> list[FaqDraft]:
    return _drafts(_rows(path), str(path))


def parse_faq_bytes(raw: bytes, name: str) -> list[FaqDraft]:
    """An uploaded FAQ file (the admin's import): the format from ``name``'s suffix; every row
    is checked before any is returned, so a bad file imports nothing. A text format must be
    UTF-8 (UnicodeDecodeError otherwise, for the caller to say so in its words)."""
    if Path(name).suffix.lower() == WORKBOOK:
        return _drafts(workbook_rows(raw, name), name)
    return parse_faq_text(raw.decode("utf-8"), name)


def parse_faq_text(raw: str, name: str) -> list[FaqDraft]:
    """An FAQ file's text (any format but a workbook), as ``parse_faq_bytes``."""
    return _drafts(_parse_rows(raw.removeprefix("\ufeff"), Path(name).suffix.lower(), name), name)


def _drafts(rows: list[Any], label: str) -> list[FaqDraft]:
    drafts = []
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise FaqFileError(f"{label}: entry {n} is not an object")
        question = str(row.get("question") or "").strip()
        answer = str(row.get("answer") or "").strip()
        if not question or not answer:
            raise FaqFileError(f"{label}: entry {n} needs both a question and an answer")
        status = str(row.get("status") or "published").strip().lower()
        if status not in FaqStatus.__members__:
            raise FaqFileError(f"{label}: entry {n} has status {status!r} (draft|published)")
        drafts.append(
            FaqDraft(
                question=question,
                answer=answer,
                external_id=str(row["id"]).strip() if row.get("id") else None,
                source=row.get("source") or None,
                source_url=row.get("source_url") or row.get("url") or None,
                language=row.get("language") or None,
                status=FaqStatus(status),
                variants=_variants(row.get("variants")),
            )
        )
    return drafts


def entry_row(entry: FaqEntry) -> dict[str, Any]:
    return {
        "id": entry.external_id or f"faq-{entry.id}",
        "question": entry.question,
        "answer": entry.answer,
        "source": entry.source,
        "source_url": entry.source_url,
        "language": entry.language,
        "status": entry.status.value,
        "variants": [v.text for v in entry.variants if v.origin.value == "staff"],
    }


def faq_file_bytes(entries: Sequence[FaqEntry], suffix: str) -> bytes:
    """The entries as a FAQ file of the format ``suffix`` names (text formats in UTF-8)."""
    if suffix == WORKBOOK:
        return workbook_bytes([_flat(entry_row(e)) for e in entries], CSV_FIELDS)
    return faq_file_text(entries, suffix).encode("utf-8")


def faq_file_text(entries: Sequence[FaqEntry], suffix: str) -> str:
    """The entries as a FAQ file of the text format ``suffix`` names (.jsonl, .json, .csv,
    .yaml)."""
    rows = [entry_row(e) for e in entries]
    if suffix == ".jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if suffix == ".json":
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    if suffix in (".yaml", ".yml"):
        return str(yaml.safe_dump(rows, allow_unicode=True, sort_keys=False))
    if suffix == ".csv":
        return _csv_text(rows)
    raise FaqFileError(f"unknown FAQ format {suffix!r} (use one of {', '.join(FORMATS)})")


def write_faq_file(path: Path, entries: Sequence[FaqEntry]) -> int:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise FaqFileError(f"{path}: unknown FAQ format (use one of {', '.join(FORMATS)})")
    content = faq_file_bytes(entries, suffix)
    try:
        path.write_bytes(content)
    except OSError as exc:
        raise FaqFileError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return len(entries)


def _csv_text(rows: Iterable[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS)
    writer.writeheader()
    for r in rows:
        writer.writerow(_flat(r))
    return out.getvalue()


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row as a table's cells (CSV, workbook): the variants in one, ``|``-separated."""
    return {**row, "variants": " | ".join(row["variants"])}


async def import_faq(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    drafts: Sequence[FaqDraft],
    *,
    updated_by: str,
    status: FaqStatus | None = None,
    progress: Progress | None = None,
) -> list[int]:
    """Create or update an entry per draft (matched on its id) in one transaction, as
    ``updated_by``, all with ``status`` when given; the entries' ids."""
    ids = []
    async with sessionmaker.begin() as session:
        for draft in drafts:
            if status is not None:
                draft.status = status
            draft.updated_by = updated_by
            ids.append((await upsert_faq(session, indexer, draft)).id)
            if progress is not None:
                progress(1)
    return ids


async def export_faq(sessionmaker: async_sessionmaker[AsyncSession], path: Path) -> int:
    """Write every FAQ entry, with its staff variants, to ``path``; how many."""
    async with sessionmaker() as session:
        entries = (
            await session.scalars(
                select(FaqEntry).options(selectinload(FaqEntry.variants)).order_by(FaqEntry.id)
            )
        ).all()
    return write_faq_file(path, entries)
