"""A document's facts and catalogue items in the store, replaced with the document.

What staff corrected or added (origin "staff") stays: an extracted item with the name of a
staff item is not stored again, so a corrected item is never overwritten by the next ingest.
The cells left out are kept in the document's metadata (``facts.rejected``) for staff.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import CatalogueRow, Document, FactRow
from bot.db.models.facts import EXTRACTED, STAFF
from retrieval.facts.extract import EXTRACTOR_VERSION, extract_facts
from retrieval.facts.model import Fact, Place
from retrieval.guard.checks import NearMissGuard
from retrieval.loading.document import LoadedDocument
from retrieval.text.folding import fold

MAX_REJECTED = 200  # cells listed for staff per document


async def store_facts(
    session: AsyncSession,
    document: Document,
    doc: LoadedDocument,
    guard: NearMissGuard,
    *,
    review: bool = False,
) -> int:
    """Replace ``document``'s extracted facts and catalogue items by those of ``doc``; the
    number of facts stored. With ``review`` a value is stored unpublished (waiting for staff)
    unless the same value in the same place was published before."""
    extraction = extract_facts(doc, guard)
    shown = {
        (_key(r.attribute, r.major, r.programme, r.method, r.year, r.campus), r.text)
        for r in (
            await session.scalars(
                select(FactRow).where(
                    FactRow.document_id == document.id,
                    FactRow.origin == EXTRACTED,
                    FactRow.published,
                )
            )
        ).all()
    }
    await session.execute(
        delete(FactRow).where(FactRow.document_id == document.id, FactRow.origin == EXTRACTED)
    )
    await session.execute(
        delete(CatalogueRow).where(
            CatalogueRow.document_id == document.id, CatalogueRow.origin == EXTRACTED
        )
    )
    staff_items = {
        (kind, fold(text))
        for kind, name, aliases in (
            await session.execute(
                select(CatalogueRow.kind, CatalogueRow.name, CatalogueRow.aliases).where(
                    CatalogueRow.origin == STAFF
                )
            )
        ).all()
        for text in (name, *(aliases or ()))
    }
    session.add_all(
        CatalogueRow(
            kind=item.kind,
            name=item.name,
            code=item.code,
            aliases=list(item.aliases),
            document_id=document.id,
            place=place_json(item.place) if item.place else {},
        )
        for item in extraction.items
        if (item.kind, fold(item.name)) not in staff_items
    )
    staff_facts = {
        _key(r.attribute, r.major, r.programme, r.method, r.year, r.campus)
        for r in (
            await session.scalars(
                select(FactRow).where(FactRow.document_id == document.id, FactRow.origin == STAFF)
            )
        ).all()
    }
    facts = [
        f
        for f in _distinct(extraction.facts)
        if _key(f.attribute, f.major, f.programme, f.method, f.year, f.campus) not in staff_facts
    ]
    session.add_all(
        FactRow(
            attribute=f.attribute,
            major=f.major,
            code=f.code,
            programme=f.programme,
            method=f.method,
            year=f.year,
            text=f.text,
            value=f.value,
            offered=f.offered,
            scale=f.scale,
            unit=f.unit,
            combinations=list(f.combinations),
            campus=f.campus,
            published=not review
            or (_key(f.attribute, f.major, f.programme, f.method, f.year, f.campus), f.text)
            in shown,
            document_id=document.id,
            place=place_json(f.place),
        )
        for f in facts
    )
    document.meta = {
        **(document.meta or {}),
        "facts": {
            "version": EXTRACTOR_VERSION,
            "stored": len(facts),
            "rejected": [
                {"text": r.text, "reason": r.reason, "place": r.place.describe()}
                for r in extraction.rejected[:MAX_REJECTED]
            ],
            "rejected_count": len(extraction.rejected),
            "publications": {str(y): t for y, t in extraction.publications.items()},
        },
    }
    await session.flush()
    return len(facts)


def facts_current(meta: dict[str, Any] | None) -> bool:
    """Whether a stored document's facts were read by this version of the extractor."""
    facts = (meta or {}).get("facts")
    return isinstance(facts, dict) and facts.get("version") == EXTRACTOR_VERSION


def _key(
    attribute: str,
    major: str,
    programme: str | None,
    method: str | None,
    year: int,
    campus: str | None,
) -> tuple[str, str, str | None, str | None, int, str | None]:
    return attribute, fold(major), programme, method, year, campus


def _distinct(facts: list[Fact]) -> list[Fact]:
    """One fact per value: a table repeated further down (a comparison of two years) adds none."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for f in facts:
        key = (
            f.attribute,
            fold(f.major),
            f.programme,
            f.method,
            f.year,
            f.value,
            f.offered,
            f.combinations,
            f.campus,
        )
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def place_json(place: Place) -> dict[str, Any]:
    return {
        k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(place).items()
    }


def fact_of(row: FactRow) -> Fact:
    """The fact a stored row holds."""
    return Fact(
        row.attribute,
        row.major,
        row.code,
        row.programme,
        row.method,
        row.year,
        row.text,
        row.value,
        row.offered,
        row.scale,
        row.unit,
        tuple(row.combinations or ()),
        place_of(row.place),
        row.campus,
    )


def place_of(raw: dict[str, Any]) -> Place:
    return Place(
        document=str(raw.get("document", "")),
        title=str(raw.get("title", "")),
        url=raw.get("url"),
        page=raw.get("page"),
        headings=tuple(raw.get("headings") or ()),
        row=raw.get("row"),
        column=str(raw.get("column", "")),
    )
