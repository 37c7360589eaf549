"""The year a document speaks of and the day after which it is about something past (2/4),
read from its text at ingest or set by staff, who then keep it over re-ingests; the campus
a facts table's column names; and the network a login attempt came from (3/4: guessing
networks are throttled, not the account).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("year", sa.Integer(), nullable=True))
    op.add_column("documents", sa.Column("valid_until", sa.Date(), nullable=True))
    op.add_column(
        "documents",
        sa.Column("validity_by_staff", sa.Boolean(), nullable=False, server_default="false"),
    )
    op.add_column("facts", sa.Column("campus", sa.Text(), nullable=True))
    op.add_column("login_attempts", sa.Column("network", sa.String(64), nullable=True))
    op.create_index("ix_login_attempts_network_at", "login_attempts", ["network", "at"])


def downgrade() -> None:
    op.drop_index("ix_login_attempts_network_at", table_name="login_attempts")
    op.drop_column("login_attempts", "network")
    op.drop_column("facts", "campus")
    op.drop_column("documents", "validity_by_staff")
    op.drop_column("documents", "valid_until")
    op.drop_column("documents", "year")
