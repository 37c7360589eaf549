"""Searching the chunks: one module per ranker and the hybrid search that composes them.

`hits` (the `Hit` and the orderings applied last), `fusion` (score fusion, RRF, interleaving),
`dense` (pgvector), `keyword` (in-memory BM25 and PostgreSQL full-text), `summary` (summary-first),
`graph` (the link graph's communities and the re-ranking by them), `rerank` (an optional
cross-encoder), and `hybrid` (the search modes: `search_chunks`, `search_parts`).

Imports: `bot.core`, `bot.db.models`, `retrieval.changes`, `retrieval.crawl.urls` (the URL form
the link graph compares) and `retrieval.offline`.
"""
