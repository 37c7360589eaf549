"""The `semantic` chunker (URAG's choice): cut where the topic changes, as the embedder sees it.

The document becomes a sequence of pieces: the sentences of its paragraphs (split as the
structure chunker splits them: never inside "28.5" or after "TP."), each list item, table row
and code block whole. Every piece is embedded with the indexer's own embedder. At each gap
between two pieces the similarity of the `WINDOW` pieces before and the `WINDOW` after (the
cosine of their mean vectors: one short table row says little on its own) measures how much
the text stays on topic; the gaps in the lowest `BREAK_PERCENTILE` of the document's
similarities become boundaries. Sizes then win over topics:

- a chunk over `max_tokens` is cut again at its least similar gap (both sides at least
  `min_tokens` when possible), until it fits;
- a chunk under `min_tokens` joins the neighbour it is more similar to, if the two fit;
- a new page always starts a chunk, and a table's first body row stays with its header.

A chunk's heading path is what its pieces' sections share, the headings below it kept in its
text as lines (as the Markdown chunker does), and its page is where it starts. Embedding every
sentence costs about as much as embedding the chunks themselves (~1.5x indexing time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval.chunking.base import (
    DEFAULT_SIZES,
    ChunkDraft,
    ChunkerFunction,
    ChunkSizes,
    TokenCounter,
    approx_tokens,
    memoized,
)
from retrieval.chunking.markdown import Block, Piece, Sizer, assemble, blocks_of
from retrieval.chunking.splitting import split_text
from retrieval.loading.document import LoadedDocument
from retrieval.text.sentences import logical_lines, split_sentences

Vectors = npt.NDArray[Any]
EmbedPassages = Callable[[Sequence[str]], Vectors]

WINDOW = 2
BREAK_PERCENTILE = 10.0


def chunk_semantic(
    doc: LoadedDocument,
    *,
    embed: EmbedPassages,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = DEFAULT_SIZES,
) -> list[ChunkDraft]:
    """Chunks of `doc` in reading order, numbered 0..n-1; `embed` gives one vector per text."""
    pieces = semantic_pieces(doc, count_tokens=count_tokens, sizes=sizes)
    vectors = embed([piece.text for piece in pieces]) if pieces else np.zeros((0, 1))
    return semantic_drafts(doc, pieces, vectors, count_tokens=count_tokens, sizes=sizes)


def semantic_chunker(embed: EmbedPassages) -> ChunkerFunction:
    """`chunk_semantic` with its embedder bound: a chunker of the one signature."""
    return partial(chunk_semantic, embed=embed)


def semantic_pieces(
    doc: LoadedDocument,
    *,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = DEFAULT_SIZES,
) -> list[Piece]:
    """The pieces to embed, in order; a piece longer than `sizes.max_tokens` comes cut by
    words."""
    count = memoized(count_tokens)
    pieces: list[Piece] = []
    for index, section in enumerate(doc.sections):
        blocks = blocks_of(section)
        start = 0
        while start < len(blocks):
            block = blocks[start]
            if block.kind != "line":
                texts = [(block.text, _separator(block))]
                start += 1
            else:
                # Lines of one paragraph: hard-wrapped continuations (PDF text) joined first.
                end = start + 1
                while (
                    end < len(blocks)
                    and blocks[end].kind == "line"
                    and not blocks[end].blank_before
                ):
                    end += 1
                texts = _sentence_texts(blocks[start:end])
                start = end
            for text, separator in texts:
                for part_index, part in enumerate(_bounded(text, count, sizes.max_tokens)):
                    pieces.append(
                        Piece(
                            part,
                            index,
                            separator if part_index == 0 else " ",
                            count(part),
                            block.header,
                        )
                    )
    return pieces


def _separator(block: Block) -> str:
    return "\n\n" if block.blank_before else "\n"


def _sentence_texts(paragraph: Sequence[Block]) -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = []
    for line_index, line in enumerate(logical_lines([block.text for block in paragraph])):
        for sentence_index, sentence in enumerate(split_sentences(line)):
            if sentence_index:
                separator = " "
            elif line_index == 0:
                separator = _separator(paragraph[0])
            else:
                separator = "\n"
            texts.append((sentence, separator))
    return texts


def _bounded(text: str, count: TokenCounter, max_tokens: int) -> list[str]:
    if count(text) <= max_tokens:
        return [text]
    return split_text(text, count_tokens=count, sizes=ChunkSizes(max_tokens, max_tokens))


def semantic_drafts(
    doc: LoadedDocument,
    pieces: Sequence[Piece],
    vectors: Vectors,
    *,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = DEFAULT_SIZES,
    min_tokens: int | None = None,
) -> list[ChunkDraft]:
    """Drafts from `pieces` and their vectors (row i for piece i)."""
    if len(vectors) != len(pieces):
        raise ValueError(f"{len(pieces)} pieces but {len(vectors)} vectors")
    if not pieces:
        return []
    count = memoized(count_tokens)
    runs = _Boundaries(doc, pieces, vectors, Sizer(count, doc.sections)).runs(
        min_tokens if min_tokens is not None else sizes.target_tokens // 3, sizes.max_tokens
    )
    return assemble(doc.sections, pieces, runs, count, sizes)


class _Boundaries:
    """Gap g lies before piece g (1 <= g < n)."""

    def __init__(
        self, doc: LoadedDocument, pieces: Sequence[Piece], vectors: Vectors, sizer: Sizer
    ) -> None:
        self._pieces = pieces
        self._sizer = sizer
        n = len(pieces)
        pages = [doc.sections[piece.section].page for piece in pieces]
        self.hard = {g for g in range(1, n) if pages[g] != pages[g - 1]}
        # A body row whose header is the piece before it is that table's first row.
        self.sticky = {
            g for g in range(1, n) if pieces[g].header and pieces[g].header == pieces[g - 1].text
        }
        self.similarity = _gap_similarities(np.asarray(vectors, dtype=np.float64))

    def runs(self, min_tokens: int, max_tokens: int) -> list[tuple[int, int]]:
        n = len(self._pieces)
        soft = [g for g in range(1, n) if g not in self.hard and g not in self.sticky]
        cuts = set(self.hard)
        if soft:
            floor = float(np.percentile([self.similarity[g] for g in soft], BREAK_PERCENTILE))
            cuts |= {g for g in soft if self.similarity[g] <= floor}
        edges = [0, *sorted(cuts), n]
        runs = [
            run
            for start, end in pairwise(edges)
            for run in self._fit(start, end, min_tokens, max_tokens)
        ]
        return self._merge_small(runs, min_tokens, max_tokens)

    def _size(self, start: int, end: int) -> int:
        return self._sizer.estimate(self._pieces[start:end])

    def _fit(self, start: int, end: int, min_tokens: int, max_tokens: int) -> list[tuple[int, int]]:
        """The run cut at its least similar gaps until every part fits."""
        if end - start < 2 or self._size(start, end) <= max_tokens:
            return [(start, end)]
        gaps = [g for g in range(start + 1, end) if g not in self.sticky] or [start + 1]
        balanced = [
            g
            for g in gaps
            if self._size(start, g) >= min_tokens and self._size(g, end) >= min_tokens
        ]
        cut = min(balanced or gaps, key=lambda g: (self.similarity[g], g))
        return [
            *self._fit(start, cut, min_tokens, max_tokens),
            *self._fit(cut, end, min_tokens, max_tokens),
        ]

    def _merge_small(
        self, runs: list[tuple[int, int]], min_tokens: int, max_tokens: int
    ) -> list[tuple[int, int]]:
        """Join each run under `min_tokens`, smallest first, to its more similar neighbour."""
        runs = list(runs)
        blocked: set[tuple[int, int]] = set()
        while True:
            small = [
                i
                for i, (start, end) in enumerate(runs)
                if self._size(start, end) < min_tokens and runs[i] not in blocked
            ]
            if not small:
                return runs
            i = min(small, key=lambda i: self._size(*runs[i]))
            options = []
            for j in (i - 1, i + 1):
                if 0 <= j < len(runs):
                    start, end = min(runs[i], runs[j]), max(runs[i], runs[j])
                    gap = end[0]
                    if gap not in self.hard and self._size(start[0], end[1]) <= max_tokens:
                        options.append((self.similarity[gap], j))
            if not options:
                blocked.add(runs[i])
                continue
            _, j = max(options)
            low, high = min(i, j), max(i, j)
            runs[low : high + 1] = [(runs[low][0], runs[high][1])]


def _gap_similarities(vectors: npt.NDArray[np.float64]) -> list[float]:
    """Entry g: the cosine of the mean of the `WINDOW` vectors before gap g and of the `WINDOW`
    after it (entry 0 is unused)."""
    n = len(vectors)
    similarities = [1.0] * max(n, 1)
    for g in range(1, n):
        before = vectors[max(0, g - WINDOW) : g].mean(axis=0)
        after = vectors[g : g + WINDOW].mean(axis=0)
        norm = float(np.linalg.norm(before) * np.linalg.norm(after))
        similarities[g] = float(before @ after) / norm if norm else 1.0
    return similarities
