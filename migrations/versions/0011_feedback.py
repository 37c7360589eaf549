"""Students' 👍/👎 on answers, and the conversations flagged by a 👎 (6/6, items 2 and 3).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "conversations", sa.Column("flagged_since", sa.DateTime(timezone=True), nullable=True)
    )
    op.create_table(
        "answer_feedback",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("value", sa.SmallInteger(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint("value IN (-1, 1)", name="ck_answer_feedback_value_is_vote"),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name="fk_answer_feedback_message_id_messages",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_answer_feedback_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_answer_feedback"),
        sa.UniqueConstraint("message_id", name="uq_answer_feedback_message_id"),
    )
    op.create_index("ix_answer_feedback_created_at", "answer_feedback", ["created_at"])
    op.create_index("ix_answer_feedback_conversation_id", "answer_feedback", ["conversation_id"])


def downgrade() -> None:
    op.drop_index("ix_answer_feedback_conversation_id", table_name="answer_feedback")
    op.drop_index("ix_answer_feedback_created_at", table_name="answer_feedback")
    op.drop_table("answer_feedback")
    op.drop_column("conversations", "flagged_since")
