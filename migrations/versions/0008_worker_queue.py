"""The worker's queue: an index of the rows still to do, per conversation (5/6, item 11).

A claim checks that no earlier message of the same conversation is still to do; with this
partial index that is one probe among the pending rows instead of a walk through the
conversation's history.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_messages_pending_conversation",
        "messages",
        ["conversation_id", "id"],
        postgresql_where=sa.text("status IN ('received', 'answering', 'queued', 'sending')"),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_pending_conversation", table_name="messages")
