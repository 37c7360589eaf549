"""Cutting `LoadedDocument`s into chunks for embedding and keyword search; the dispatch is here.

`retrieval.chunking.base` holds what every chunker shares (the draft, token counts, the size check
and the one `ChunkerFunction` signature); one module per chunker: `structure` (sections, then
blank lines, lines, sentences), `markdown` (Markdown's own block structure), `legal` (Vietnamese
regulations: Chương, Mục, Điều, Khoản) and `semantic` (embedding similarity between sentences).
`chunk_for` and `draft_chunks` pick the chunker a setting (`ChunkerMode`, bot.core.types) names.

Imports: `bot.core`, `retrieval.loading`, `retrieval.text` and (for the semantic chunker's
vectors) `retrieval.embedders`.
"""

from __future__ import annotations

from bot.core.types import CHUNKER_MODES, Chunker, ChunkerMode
from retrieval.chunking.base import (
    DEFAULT_SIZES,
    ChunkDraft,
    ChunkerFunction,
    ChunkSizes,
    TokenCounter,
    approx_tokens,
)
from retrieval.chunking.legal import chunk_regulation, is_regulation
from retrieval.chunking.markdown import chunk_markdown
from retrieval.chunking.semantic import (
    EmbedPassages,
    semantic_chunker,
    semantic_drafts,
    semantic_pieces,
)
from retrieval.chunking.structure import chunk_document
from retrieval.embedders.base import Embedder, embed_off_loop
from retrieval.loading.document import LoadedDocument

# What "auto" runs on a document that is not a regulation: the chunker with the best
# document-level Hit@5, then MRR@5, on the UIT questions (docs/benchmarks.md, "Chunkers").
AUTO_CHUNKER: Chunker = "structure"

# The chunkers that need nothing but the document and the sizes.
CHUNKERS: dict[Chunker, ChunkerFunction] = {
    "structure": chunk_document,
    "markdown": chunk_markdown,
    "legal": chunk_regulation,
}


def resolve_chunker(doc: LoadedDocument, mode: ChunkerMode) -> Chunker:
    """The chunker `mode` names; for "auto", legal on a regulation and `AUTO_CHUNKER` else."""
    if mode not in CHUNKER_MODES:
        raise ValueError(f"unknown chunker {mode!r}; choose one of {', '.join(CHUNKER_MODES)}")
    if mode == "auto":
        return "legal" if is_regulation(doc) else AUTO_CHUNKER
    return mode


def chunk_for(
    doc: LoadedDocument,
    mode: ChunkerMode,
    *,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = DEFAULT_SIZES,
    embed: EmbedPassages | None = None,
) -> list[ChunkDraft]:
    """Drafts of `doc` by the chunker `mode` names (see `resolve_chunker`); "semantic" needs
    `embed`, the embedder's `embed_passages`."""
    chunker = resolve_chunker(doc, mode)
    if chunker == "semantic":
        if embed is None:
            raise ValueError("the semantic chunker needs an embedder (embed=...)")
        chunk = semantic_chunker(embed)
    else:
        chunk = CHUNKERS[chunker]
    return chunk(doc, count_tokens=count_tokens, sizes=sizes)


async def draft_chunks(
    doc: LoadedDocument, mode: ChunkerMode, embedder: Embedder, *, sizes: ChunkSizes = DEFAULT_SIZES
) -> list[ChunkDraft]:
    """`chunk_for` as the indexer runs it: sizes from the embedder's tokenizer, and the semantic
    chunker's sentences embedded on the embedding thread rather than on the event loop."""
    if resolve_chunker(doc, mode) != "semantic":
        return chunk_for(doc, mode, count_tokens=embedder.count_tokens, sizes=sizes)
    pieces = semantic_pieces(doc, count_tokens=embedder.count_tokens, sizes=sizes)
    vectors = await embed_off_loop(embedder.embed_passages, [piece.text for piece in pieces])
    return semantic_drafts(doc, pieces, vectors, count_tokens=embedder.count_tokens, sizes=sizes)
