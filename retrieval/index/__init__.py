"""Writing the knowledge store: documents → chunks with embeddings and keyword text, FAQ entries,
document summaries; and the index's own state (the embedder it was built with).

The modules: `indexer` (`Indexer`: the embedder and the keyword-text processor), `state` (the
index state and the vector columns' dimension), `documents`, `faq_entries`, `summaries` and
`reindex` (everything re-embedded after a change of embedder).
Functions take the session first and never commit: the caller owns the transaction.
Imports: `bot.core`, `bot.db.models`, `retrieval.chunking`, `retrieval.embedders`,
`retrieval.loading` and `retrieval.text`.
"""
