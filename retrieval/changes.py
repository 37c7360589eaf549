"""A cheap signature of what a set of tables holds: has anything changed since a cache was made?

Every process keeps models derived from the knowledge in memory (the BM25 index, the diacritic
restorer) and asks, once per question, whether the tables they were made from changed. Counting
the rows for that (``count``, ``max`` and ``sum`` of the ids) took 15-17 ms at 100,000 chunks
(bench/search_latency.py), as long as the search itself. The signature here costs a primary-key
lookup and a few counter reads per table:

- the largest id (ids are never reused: an insert or a replacement is seen at once);
- PostgreSQL's cumulative row counters (inserted, updated, deleted), which also see a delete or
  an update; they are published a moment after the writing transaction ends (at most ~10 s
  later), so a deletion elsewhere reaches a cache within seconds;
- the same counters of the current transaction, so that code which changes the knowledge and
  then searches in one transaction sees its own change.

A rolled-back change moves the counters too: the cache is rebuilt once for nothing, which is safe.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

_COUNTERS = (
    "pg_stat_get_tuples_inserted",
    "pg_stat_get_tuples_updated",
    "pg_stat_get_tuples_deleted",
    "pg_stat_get_xact_tuples_inserted",
    "pg_stat_get_xact_tuples_updated",
    "pg_stat_get_xact_tuples_deleted",
)
_TABLES = frozenset(
    {"chunks", "faq_entries", "faq_variants", "documents", "facts", "catalogue_items"}
)


def signature_expression(tables: Sequence[str]) -> str:
    """The SQL expression ``tables_signature`` selects, to put beside other columns of a
    statement that runs anyway (one round trip instead of two)."""
    return _signature_sql(tuple(tables)).removeprefix("SELECT ")


def _signature_sql(tables: Sequence[str]) -> str:
    unknown = set(tables) - _TABLES
    if unknown:  # the names are written into SQL: only known ones
        raise ValueError(f"no signature for tables {sorted(unknown)}")
    parts = []
    for table in tables:
        counters = " || ':' || ".join(f"{f}('{table}'::regclass)" for f in _COUNTERS)
        largest = f"coalesce((SELECT max(id) FROM {table}), 0)"  # noqa: S608 - from _TABLES
        parts.append(f"{largest} || ':' || {counters}")
    return "SELECT " + " || '/' || ".join(parts)


_STATEMENTS: dict[tuple[str, ...], str] = {}


async def tables_signature(session: AsyncSession, tables: Sequence[str]) -> str:
    """A text that changes whenever a row of ``tables`` is inserted, updated or deleted."""
    key = tuple(tables)
    if key not in _STATEMENTS:
        _STATEMENTS[key] = _signature_sql(key)
    return str((await session.execute(text(_STATEMENTS[key]))).scalar_one())
