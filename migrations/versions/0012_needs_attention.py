"""The conversations that need staff ("cần xử lý": a request for a person or a 👎 not yet
handled), counted in the admin's menu on every page: a partial index holds only those.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_conversations_needs_attention",
        "conversations",
        ["id"],
        postgresql_where=sa.text("waiting_since IS NOT NULL OR flagged_since IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_conversations_needs_attention", table_name="conversations")
