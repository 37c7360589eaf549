"""The ingested document an FAQ entry names as its source, so that its answer cites the
document as tier 2 does: by the document's title and public address, not by what staff typed.

Staff (or an import file) write an entry's ``source`` as they know it: a file's name
("hoc-phi-2026.md"), its path, a web address, or a document's title; a drafted entry also keeps
the id of the document it came from. An entry's document is, in this order: the one it was
drafted from; the one whose ``source`` is the entry's; one whose public address is the entry's
source or address; one whose path ends in the entry's source as a file name or a relative path
(the newest such, if two folders hold the same name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession


@dataclass(frozen=True)
class SourceDocument:
    """What a citation shows of a document: its title and public address (and its source,
    the path staff pages find it by)."""

    title: str
    source: str
    url: str | None


# One lateral look-up per entry (an answer asks for one or two): the documents are scanned,
# which is cheap for the few hundred a university has, and no index serves a suffix match.
_SOURCE_DOCUMENTS = text(
    r"""
    SELECT e.id AS faq_id, d.title, d.source, d.url
    FROM faq_entries e
    CROSS JOIN LATERAL (
        SELECT d.title, d.source, d.url,
               CASE WHEN d.id = e.source_document_id THEN 0
                    WHEN d.source = e.source THEN 1
                    WHEN d.url = e.source OR d.url = e.source_url THEN 2
                    ELSE 3 END AS rank
        FROM documents d
        WHERE d.id = e.source_document_id
           OR d.source = e.source
           OR d.url = e.source
           OR d.url = e.source_url
           OR (e.source !~ '^([/\\~]|[A-Za-z]:)'
               AND right(d.source, length(e.source) + 1) IN ('/' || e.source, '\' || e.source))
        ORDER BY rank, d.updated_at DESC, d.id DESC
        LIMIT 1
    ) d
    WHERE e.id = ANY(:ids)
    """
)


async def source_documents(
    session: AsyncSession, faq_ids: Sequence[int]
) -> dict[int, SourceDocument]:
    """The document each of ``faq_ids`` names as its source, for those that name one tuvan
    has ingested."""
    if not faq_ids:
        return {}
    rows = await session.execute(_SOURCE_DOCUMENTS, {"ids": sorted(set(faq_ids))})
    return {int(r.faq_id): SourceDocument(r.title or "", r.source, r.url) for r in rows}
