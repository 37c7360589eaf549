"""Retrieval: documents in, passages and FAQ entries out.

    loading/     source files in, `LoadedDocument`s out, one module per document type
    crawl/       a web site crawled into `LoadedDocument`s
    chunking/    documents cut into chunks: the base and one module per chunker
    text/        folding, the language guesser, keyword terms, sentences, word lists
    embedders/   the `Embedder` protocol and its back-ends
    index/       writing the store: documents, chunks, FAQ entries, summaries, the index state
    search/      hits and fusion, dense, keyword, summary, graph, rerank, and hybrid search
    faq/         tier 1: an FAQ entry matched to a question
    guard/       the near-miss guard that vetoes an FAQ entry about something else
    restore/     diacritics put back on questions typed without them
    query.py     a question read for search: restored, expanded, split into parts
    thresholds.py, changes.py, offline.py

Imports only `bot.core` and `bot.db.models` from the rest of the project (the import-linter
contract in pyproject.toml holds the layers).
"""
