"""The knowledge signature (retrieval.changes) in a real PostgreSQL: every insert, update and
delete changes it, in the writing transaction itself too."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from retrieval.changes import tables_signature


async def test_inserts_updates_and_deletes_change_the_signature(session: AsyncSession) -> None:
    tables = ("faq_entries", "faq_variants")
    seen = {await tables_signature(session, tables)}
    assert await tables_signature(session, tables) in seen  # nothing changed: the same
    row = await session.execute(
        text("INSERT INTO faq_entries (question, answer) VALUES ('q?', 'a.') RETURNING id")
    )
    entry = row.scalar_one()
    for statement in (
        "UPDATE faq_entries SET answer = 'b.' WHERE id = :id",
        "INSERT INTO faq_variants (faq_id, text) VALUES (:id, 'q2?')",
        "DELETE FROM faq_variants WHERE faq_id = :id",
    ):
        signature = await tables_signature(session, tables)
        assert signature not in seen, statement
        seen.add(signature)
        await session.execute(text(statement), {"id": entry})
    assert await tables_signature(session, tables) not in seen


async def test_only_known_tables_reach_the_sql(session: AsyncSession) -> None:
    with pytest.raises(ValueError, match="no signature"):
        await tables_signature(session, ("chunks; DROP TABLE chunks",))
