"""Retention (5/6, item 10): indexes for `tuvan prune`'s batches.

Emptying old raw payloads and deleting old login attempts each find their rows by time; without
these indexes every batch would walk the messages already emptied, or scan the whole table. And
deleting a message sets ``reply_to_id`` NULL in its replies: without an index on it, every
deleted message scans ``messages`` (5,000 deletions were minutes on 200,000 messages).
On a large existing ``messages`` table the index build blocks writes to it while it runs: an
operator can create the two ``messages`` indexes beforehand with CREATE INDEX CONCURRENTLY (same
name and definition), and this migration then leaves it alone.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_messages_raw_kept",
        "messages",
        ["created_at"],
        postgresql_where=sa.text("raw <> '{}'::jsonb"),
        if_not_exists=True,
    )
    op.create_index("ix_login_attempts_at", "login_attempts", ["at"], if_not_exists=True)
    # ON DELETE SET NULL of messages.reply_to_id: each deleted message looks up its replies.
    op.create_index("ix_messages_reply_to_id", "messages", ["reply_to_id"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_messages_reply_to_id", table_name="messages")
    op.drop_index("ix_login_attempts_at", table_name="login_attempts")
    op.drop_index("ix_messages_raw_kept", table_name="messages")
