"""Keep embeddings inside the table row (storage MAIN) instead of in TOAST.

A 384-float vector is 1.5 kB; with a question, an answer and keyword text beside it a row passes
PostgreSQL's 2 kB TOAST threshold, and the default storage of pgvector's type then moves the
vector out of line. Every distance computed from the heap (the FAQ scan, the ``<=>`` in the
select lists) then costs extra page reads: 2,904 buffer hits against 500 for 1,000 FAQ entries,
and a tier-1 query 2.5 ms slower (docs/benchmarks.md). MAIN keeps the vector in the row unless
the row could not fit a page at all; the long texts go to TOAST instead.

Rows written before this revision keep their layout until they are rewritten (``tuvan reindex``
rewrites them all).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("faq_entries", "faq_variants", "chunks")


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
