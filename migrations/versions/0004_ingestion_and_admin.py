"""Traceable enrichment (URAG-D/F), document summaries, link communities; staff accounts.

- faq_entries: origin (staff | generated), the source document/chunk/text/version of a
  generated entry, and a needs-review flag set when that source changes.
- faq_variants: the version of the question a generated variant paraphrased, needs-review flag.
- documents: the LLM-extracted general context, the link-graph community.
- chunks: the augmented (context-rewritten) text that search uses when it is set.
- document_summaries: one summary per document, embedded and keyword-indexed.
- staff_users, staff_sessions, login_attempts, audit_log: the admin (issue 5/5).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FAQ_ORIGIN = postgresql.ENUM("staff", "generated", name="faq_origin", create_type=False)
STAFF_ROLE = postgresql.ENUM("viewer", "editor", "admin", name="staff_role", create_type=False)
TSV_EXPR = "to_tsvector('simple'::regconfig, coalesce(keyword_text, ''))"


def _now(name: str) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False)


def upgrade() -> None:
    bind = op.get_bind()
    for enum in (FAQ_ORIGIN, STAFF_ROLE):
        enum.create(bind, checkfirst=True)

    op.add_column(
        "faq_entries", sa.Column("origin", FAQ_ORIGIN, server_default="staff", nullable=False)
    )
    op.add_column("faq_entries", sa.Column("source_document_id", sa.Integer(), nullable=True))
    op.add_column("faq_entries", sa.Column("source_chunk_id", sa.Integer(), nullable=True))
    op.add_column("faq_entries", sa.Column("source_text", sa.Text(), nullable=True))
    op.add_column("faq_entries", sa.Column("source_version", sa.String(length=64), nullable=True))
    op.add_column(
        "faq_entries",
        sa.Column("needs_review", sa.Boolean(), server_default="false", nullable=False),
    )
    op.add_column("faq_entries", sa.Column("review_note", sa.Text(), nullable=True))
    op.create_foreign_key(
        "fk_faq_entries_source_document_id_documents",
        "faq_entries",
        "documents",
        ["source_document_id"],
        ["id"],
        ondelete="CASCADE",
    )
    op.create_foreign_key(
        "fk_faq_entries_source_chunk_id_chunks",
        "faq_entries",
        "chunks",
        ["source_chunk_id"],
        ["id"],
        ondelete="SET NULL",
    )
    op.create_index("ix_faq_entries_source_document_id", "faq_entries", ["source_document_id"])

    op.add_column("faq_variants", sa.Column("source_version", sa.String(length=64), nullable=True))
    op.add_column(
        "faq_variants",
        sa.Column("needs_review", sa.Boolean(), server_default="false", nullable=False),
    )

    op.add_column("documents", sa.Column("context", sa.Text(), nullable=True))
    op.add_column("documents", sa.Column("community", sa.Integer(), nullable=True))
    op.add_column("chunks", sa.Column("augmented_text", sa.Text(), nullable=True))

    op.create_table(
        "document_summaries",
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("source_version", sa.String(length=64), nullable=False),
        sa.Column("keyword_text", sa.Text(), server_default="", nullable=False),
        sa.Column(
            "tsv",
            postgresql.TSVECTOR(),
            sa.Computed(TSV_EXPR, persisted=True),
            nullable=True,
        ),
        sa.Column("embedding", Vector(384), nullable=True),
        _now("created_at"),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name="fk_document_summaries_document_id_documents",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("document_id", name="pk_document_summaries"),
    )
    op.execute("ALTER TABLE document_summaries ALTER COLUMN embedding SET STORAGE MAIN")
    op.create_index(
        "ix_document_summaries_embedding_hnsw",
        "document_summaries",
        ["embedding"],
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index(
        "ix_document_summaries_tsv", "document_summaries", ["tsv"], postgresql_using="gin"
    )

    op.create_table(
        "staff_users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("role", STAFF_ROLE, nullable=False),
        sa.Column("active", sa.Boolean(), server_default="true", nullable=False),
        _now("created_at"),
        sa.Column("last_login_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_staff_users"),
        sa.UniqueConstraint("email", name="uq_staff_users_email"),
    )
    op.create_table(
        "staff_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        _now("created_at"),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["staff_users.id"],
            name="fk_staff_sessions_user_id_staff_users",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name="pk_staff_sessions"),
    )
    op.create_index("ix_staff_sessions_user_id", "staff_sessions", ["user_id"])
    op.create_table(
        "login_attempts",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.Column("succeeded", sa.Boolean(), nullable=False),
        _now("at"),
        sa.PrimaryKeyConstraint("id", name="pk_login_attempts"),
    )
    op.create_index("ix_login_attempts_email_at", "login_attempts", ["email", "at"])
    op.create_index("ix_login_attempts_ip_at", "login_attempts", ["ip", "at"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger(), nullable=False),
        _now("at"),
        sa.Column("actor", sa.String(length=320), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("entity", sa.String(length=32), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=True),
        sa.Column("before", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("after", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )
    op.create_index("ix_audit_log_entity_entity_id", "audit_log", ["entity", "entity_id"])


def downgrade() -> None:
    for table in ("audit_log", "login_attempts", "staff_sessions", "staff_users"):
        op.drop_table(table)
    op.drop_table("document_summaries")
    op.drop_column("chunks", "augmented_text")
    op.drop_column("documents", "community")
    op.drop_column("documents", "context")
    op.drop_column("faq_variants", "needs_review")
    op.drop_column("faq_variants", "source_version")
    op.drop_index("ix_faq_entries_source_document_id", table_name="faq_entries")
    op.drop_constraint("fk_faq_entries_source_chunk_id_chunks", "faq_entries", type_="foreignkey")
    op.drop_constraint(
        "fk_faq_entries_source_document_id_documents", "faq_entries", type_="foreignkey"
    )
    for column in (
        "review_note",
        "needs_review",
        "source_version",
        "source_text",
        "source_chunk_id",
        "source_document_id",
        "origin",
    ):
        op.drop_column("faq_entries", column)
    bind = op.get_bind()
    for enum in (STAFF_ROLE, FAQ_ORIGIN):
        enum.drop(bind, checkfirst=True)
