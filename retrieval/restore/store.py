"""The diacritic restorer of the current knowledge, shared by every process through PostgreSQL.

The restorer learns from the chunks and the FAQ (retrieval.restore), so it changes when they do.
A cheap signature of the knowledge (retrieval.changes, over chunks, FAQ entries and variants)
names the version a restorer was learned from:

- a process keeps the restorer of the signature it last saw;
- when the signature changed, it loads the counts stored under the new signature in
  ``text_models``;
- when none are stored, it learns them from the knowledge in a transaction of its own, under an
  advisory lock (so that two processes seeing the change at once learn them once), and stores
  them for the others.

A knowledge base larger than ``MAX_TRAINING_CHARS`` of chunk text is sampled evenly by chunk id:
a few million characters hold the school's vocabulary, and learning stays a matter of seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import TextModel
from retrieval.changes import tables_signature
from retrieval.restore.ngrams import NgramCounts
from retrieval.restore.restorer import DiacriticRestorer

log = logging.getLogger(__name__)

RESTORER = "restorer"
MAX_TRAINING_CHARS = 8_000_000
_LOCK_KEY = 0x7475_7661_6E52  # "tuvanR": serialises learning across processes

_CHUNK_CHARS_SQL = text("SELECT coalesce(sum(length(text)), 0) FROM chunks")
_CHUNKS_SQL = text(
    """
    SELECT c.heading_path, c.text, d.title FROM chunks c JOIN documents d ON d.id = c.document_id
    WHERE c.id % :stride = 0 ORDER BY c.id
    """
)
# Folded variants are the question without marks: nothing to learn marks from.
_FAQ_SQL = text(
    """
    SELECT question || E'\n' || answer FROM faq_entries
    UNION ALL
    SELECT text FROM faq_variants WHERE origin <> 'folded'
    """
)


# What the restorer learns from: its cache is current while these tables are unchanged.
RESTORER_TABLES = ("chunks", "faq_entries", "faq_variants")


async def knowledge_signature(session: AsyncSession) -> str:
    return await tables_signature(session, RESTORER_TABLES)


async def learn_counts(session: AsyncSession) -> NgramCounts:
    """Syllable counts of the knowledge this session sees (sampled past the cap)."""
    chars = int((await session.execute(_CHUNK_CHARS_SQL)).scalar_one())
    stride = max(1, -(-chars // MAX_TRAINING_CHARS))
    texts: list[str] = []
    titles: set[str] = set()
    for heading, body, title in await session.execute(_CHUNKS_SQL, {"stride": stride}):
        texts.append(f"{heading}\n{body}")
        titles.add(title)
    texts.extend(titles)
    texts.extend(row[0] for row in await session.execute(_FAQ_SQL))
    return await asyncio.to_thread(lambda: NgramCounts().add_texts(texts))


@dataclass
class _Cached:
    signature: str
    counts: NgramCounts
    restorers: dict[int, DiacriticRestorer]  # by id() of the expansions mapping


_cache: dict[str, _Cached] = {}  # by database URL
_lock = asyncio.Lock()


def clear_restorer_cache() -> None:
    """Forget the restorers this process holds (tests, or to free memory)."""
    _cache.clear()


async def current_restorer(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    expansions: Mapping[str, str],
    *,
    signature: str | None = None,
) -> DiacriticRestorer:
    """The restorer of the knowledge ``session`` sees; learned and stored if nobody has yet.
    ``signature``: ``RESTORER_TABLES``' signature, when the caller read it in this session."""
    if signature is None:
        signature = await knowledge_signature(session)
    key = str(session.bind.engine.url) if session.bind is not None else ""
    async with _lock:
        cached = _cache.get(key)
        if cached is None or cached.signature != signature:
            cached = await _load_or_learn(session, sessionmaker, signature)
            _cache[key] = cached
        restorer = cached.restorers.get(id(expansions))
        if restorer is None:
            restorer = await asyncio.to_thread(DiacriticRestorer, cached.counts, expansions)
            cached.restorers = {id(expansions): restorer}
        return restorer


async def _load_or_learn(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], signature: str
) -> _Cached:
    stored = await _stored(session, signature)
    if stored is not None:
        return _Cached(signature, stored, {})
    started = time.perf_counter()
    async with sessionmaker.begin() as writer:
        await writer.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
        # Another process may have learned it while this one waited; and the knowledge may
        # have changed since ``session`` looked: learn what this transaction sees, under its name.
        signature = await knowledge_signature(writer)
        stored = await _stored(writer, signature)
        if stored is not None:
            return _Cached(signature, stored, {})
        counts = await learn_counts(writer)
        blob = await asyncio.to_thread(counts.to_bytes)
        statement = insert(TextModel).values(name=RESTORER, signature=signature, data=blob)
        await writer.execute(
            statement.on_conflict_do_update(
                index_elements=[TextModel.name],
                set_={
                    "signature": signature,
                    "data": blob,
                    "built_at": statement.excluded.built_at,
                },
            )
        )
    log.info(
        "diacritic restorer learned from the knowledge: %d syllables, %d pairs, %.1f s",
        len(counts.unigrams),
        len(counts.bigrams),
        time.perf_counter() - started,
    )
    return _Cached(signature, counts, {})


async def _stored(session: AsyncSession, signature: str) -> NgramCounts | None:
    blob = await session.scalar(
        select(TextModel.data).where(TextModel.name == RESTORER, TextModel.signature == signature)
    )
    if blob is None:
        return None
    try:
        return await asyncio.to_thread(NgramCounts.from_bytes, blob)
    except ValueError as exc:  # another format: learn again
        log.info("stored restorer counts are unusable (%s); learning them again", exc)
        return None
