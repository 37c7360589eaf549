from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.db import migrate
from bot.db.models import Base


def _diff(conn: Connection) -> list[object]:
    ctx = MigrationContext.configure(conn, opts={"compare_type": True})
    return list(compare_metadata(ctx, Base.metadata))


async def test_models_and_migrations_agree(connection: AsyncConnection) -> None:
    assert await connection.run_sync(_diff) == []


async def test_database_is_at_the_head_revision(engine: AsyncEngine) -> None:
    assert await migrate.current_revision(engine) == migrate.head_revision()


async def test_first_migration_creates_the_vector_extension(connection: AsyncConnection) -> None:
    rows = await connection.execute(
        text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    )
    assert rows.scalar_one() is not None


async def test_indexes_are_hnsw_cosine_and_gin(connection: AsyncConnection) -> None:
    rows = await connection.execute(
        text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'")
    )
    defs = {name: definition for name, definition in rows}
    assert "USING hnsw (embedding vector_cosine_ops)" in defs["ix_chunks_embedding_hnsw"]
    assert "USING gin (tsv)" in defs["ix_chunks_tsv"]
