"""Answers staff settled ("đã xem") in the admin's "Cần xem lại" queue (6/6, item 2).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "settled_answers",
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("settled_by", sa.String(320), nullable=False),
        sa.Column(
            "settled_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_settled_answers_message_id_messages",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("message_id", name="pk_settled_answers"),
    )


def downgrade() -> None:
    op.drop_table("settled_answers")
