"""The year an FAQ entry speaks of and the day after which tier 1 no longer answers it
verbatim (2/4).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("faq_entries", sa.Column("year", sa.Integer(), nullable=True))
    op.add_column("faq_entries", sa.Column("valid_until", sa.Date(), nullable=True))


def downgrade() -> None:
    op.drop_column("faq_entries", "valid_until")
    op.drop_column("faq_entries", "year")
