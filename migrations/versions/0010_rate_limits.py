"""The web chat's token buckets, shared by every serve process (5/6, item 1).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_buckets",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("full_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_rate_buckets"),
    )
    op.create_index("ix_rate_buckets_full_at", "rate_buckets", ["full_at"])


def downgrade() -> None:
    op.drop_index("ix_rate_buckets_full_at", table_name="rate_buckets")
    op.drop_table("rate_buckets")
