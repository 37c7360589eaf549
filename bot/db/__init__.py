"""The database: the ORM models, the engine (configured server or embedded PostgreSQL) and
Alembic migrations. Imports only ``bot.core``."""
