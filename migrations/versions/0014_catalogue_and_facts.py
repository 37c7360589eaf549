"""The school's catalogue and facts tables (2/4): majors, programmes, methods and combinations,
and the values of its cut-off, quota and fee tables, each with where it was found.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _common() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("origin", sa.String(16), server_default="extracted", nullable=False),
        sa.Column("document_id", sa.Integer(), nullable=True),
        sa.Column(
            "place", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False
        ),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("updated_by", sa.String(320), nullable=True),
    ]


def upgrade() -> None:
    op.create_table(
        "catalogue_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("code", sa.String(64), nullable=True),
        sa.Column(
            "aliases", postgresql.JSONB(astext_type=sa.Text()), server_default="[]", nullable=False
        ),
        sa.Column("hidden", sa.Boolean(), server_default="false", nullable=False),
        *_common(),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name="fk_catalogue_items_document_id_documents",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_catalogue_items"),
    )
    op.create_index("ix_catalogue_items_kind", "catalogue_items", ["kind"])
    op.create_index("ix_catalogue_items_document_id", "catalogue_items", ["document_id"])
    op.create_table(
        "facts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attribute", sa.String(64), nullable=False),
        sa.Column("major", sa.Text(), nullable=False),
        sa.Column("code", sa.String(64), nullable=True),
        sa.Column("programme", sa.Text(), nullable=True),
        sa.Column("method", sa.Text(), nullable=True),
        sa.Column("year", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("offered", sa.Boolean(), server_default="true", nullable=False),
        sa.Column("scale", sa.Float(), nullable=True),
        sa.Column("unit", sa.Text(), nullable=True),
        sa.Column(
            "combinations",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default="[]",
            nullable=False,
        ),
        sa.Column("published", sa.Boolean(), server_default="true", nullable=False),
        *_common(),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name="fk_facts_document_id_documents",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_facts"),
    )
    op.create_index("ix_facts_attribute_year", "facts", ["attribute", "year"])
    op.create_index("ix_facts_document_id", "facts", ["document_id"])


def downgrade() -> None:
    op.drop_table("facts")
    op.drop_table("catalogue_items")
