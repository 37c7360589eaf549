"""Cutting one section's text to size: at blank lines, then lines (a list item or a table row is
never cut; each piece of a table repeats its header), then sentence ends with overlap, then
spaces between words, and last between characters. The structure chunker runs it on every
section; the other chunkers on a block too long to keep whole (`split_text`).

A piece never ends on a line that heads what follows - one ending with a colon ("1. Hồ sơ
tuyển sinh gồm:", "… như sau:") or set in bold alone ("**VII. HỒ SƠ TUYỂN SINH**") - when
another cut is possible, even at the cost of one piece more: a chunk that ends "hồ sơ gồm:"
is found for "hồ sơ gồm những gì" and quotes nothing the student asked (one chunk in 13 of the
UIT, PTIT and demo corpora ended so). Nor does it end on the short line that names a table
("1. CƠ SỞ ĐÀO TẠO PHÍA BẮC (mã BVH)"), and every later piece of a table cut in pieces repeats
that line over its header: without it, the rows of a later piece are cut-offs of no campus.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import count as counter

from retrieval.chunking.base import TABLE_SEPARATOR_ROW, ChunkSizes, TokenCounter
from retrieval.loading.document import FENCE
from retrieval.text.sentences import logical_lines, split_sentences


def split_text(text: str, *, count_tokens: TokenCounter, sizes: ChunkSizes) -> list[str]:
    """`text` cut as one section is cut here (blank lines, lines, sentences, words), each piece
    at most `sizes.max_tokens`: the fallback of the other chunkers for a block that is too long."""
    return Splitter(count_tokens, sizes).split(text)


_CAPTION_TOKENS = 40  # a line this short just before a table may name it


@dataclass(frozen=True)
class _Unit:
    """The smallest piece packing moves around; `group` marks pieces that must not share a chunk."""

    text: str
    separator: str
    tokens: int
    group: int | None = None
    heads: int = 0  # how badly a chunk ending with it breaks what it heads (``heads``)


class Splitter:
    def __init__(self, count_tokens: TokenCounter, sizes: ChunkSizes) -> None:
        self._count = count_tokens
        # An embedder's count includes its prefix and special tokens: joined units pay them once.
        self._overhead = max(0, count_tokens(""))
        self._target = sizes.target_tokens
        self._limit = sizes.max_tokens
        self._overlap = sizes.overlap_sentences
        self._groups = counter()

    def split(self, text: str) -> list[str]:
        if not text.strip():
            return []
        units = self._units(text)
        chunks = [self._join(units[start:end]) for start, end in self._pack(units)]
        # Token counts of joined text may differ slightly from the sum of the parts.
        return [piece for chunk in chunks for piece in self._enforce_limit(chunk)]

    # Units ---------------------------------------------------------------------------------------

    def _units(self, text: str) -> list[_Unit]:
        units: list[_Unit] = []
        for kind, lines, separator in _blocks(text):
            block = "\n".join(lines)
            tokens = self._count(block)
            caption = None
            if kind == "table" and units and _captions(units[-1]):
                # The line naming the table stays with it, and a later piece repeats it.
                caption = units[-1].text
                units[-1] = replace(units[-1], heads=max(units[-1].heads, 1))
            if tokens <= self._target:
                units.append(_Unit(block, separator, tokens, heads=heads(block)))
            elif kind == "table":
                units.extend(self._table_units(lines, separator, caption))
            else:
                for index, line in enumerate(logical_lines(lines)):
                    units.extend(self._line_units(line, separator if index == 0 else "\n"))
        return units

    def _unit(self, text: str, separator: str, group: int | None = None) -> _Unit:
        return _Unit(text, separator, self._count(text), group, heads(text) if group is None else 0)

    def _content(self, tokens: int) -> int:
        return max(0, tokens - self._overhead)

    def _line_units(self, line: str, separator: str) -> list[_Unit]:
        if self._count(line) <= self._limit:
            return [self._unit(line, separator)]
        group = next(self._groups)
        return [
            self._unit(piece, separator if index == 0 else "\n", group)
            for index, piece in enumerate(self._sentence_pieces(line))
        ]

    def _table_units(
        self, lines: list[str], separator: str, caption: str | None = None
    ) -> list[_Unit]:
        """A table cut into pieces of whole rows, each repeating the header rows, and every
        piece after the first the ``caption`` line over the table: "1. CƠ SỞ ĐÀO TẠO PHÍA BẮC
        (mã BVH)" says whose cut-offs the rows of a later piece are."""
        header_size = 1
        if len(lines) > 1 and TABLE_SEPARATOR_ROW.match(lines[1].strip()):
            header_size = 2
            # Scraped tables often have an empty first row and the real header as the first body
            # row ("|  |  |" / "| --- | --- |" / "| STT | Mã ngành |"): repeat that row too.
            if len(lines) > 2 and not lines[0].replace("|", "").strip():
                header_size = 3
        header, rows = lines[:header_size], lines[header_size:]
        again = [caption, *header] if caption is not None else header
        header_tokens = self._count("\n".join(again))
        room = self._target - header_tokens
        if not rows or room < max(self._count(row) for row in rows):
            # A header or a row too long to repeat: treat the table as plain lines.
            return [
                unit
                for index, line in enumerate(lines)
                for unit in self._line_units(line, separator if index == 0 else "\n")
            ]
        pieces = math.ceil(self._content(self._count("\n".join(rows))) / room)
        while True:
            size = math.ceil(len(rows) / pieces)
            texts = [
                "\n".join([*(header if i == 0 else again), *rows[i : i + size]])
                for i in range(0, len(rows), size)
            ]
            units = [self._unit(t, separator if i == 0 else "\n") for i, t in enumerate(texts)]
            if size == 1 or all(unit.tokens <= self._target for unit in units):
                group = next(self._groups)
                return [_Unit(u.text, u.separator, u.tokens, group) for u in units]
            pieces += 1

    def _sentence_pieces(self, line: str) -> list[str]:
        """Sentences packed up to the target, each piece repeating the last `overlap` sentences."""
        pieces: list[str] = []
        current: list[str] = []
        fresh = 0  # sentences in `current` that no earlier piece holds
        for sentence in split_sentences(line):
            if self._count(sentence) > self._limit:
                if fresh:
                    pieces.append(" ".join(current))
                pieces.extend(self._word_pieces(sentence))
                current, fresh = [], 0
                continue
            if current and self._count(" ".join([*current, sentence])) > self._target:
                if fresh:
                    pieces.append(" ".join(current))
                current = current[len(current) - self._overlap :] if self._overlap else []
                while current and self._count(" ".join([*current, sentence])) > self._target:
                    current = current[1:]
                fresh = 0
            current.append(sentence)
            fresh += 1
        if fresh:
            pieces.append(" ".join(current))
        return pieces

    def _word_pieces(self, text: str) -> list[str]:
        pieces: list[str] = []
        current = ""
        for word in text.split():
            if self._count(word) > self._target:
                if current:
                    pieces.append(current)
                    current = ""
                pieces.extend(self._character_pieces(word))
            elif current and self._count(f"{current} {word}") > self._target:
                pieces.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        if current:
            pieces.append(current)
        return pieces

    def _character_pieces(self, word: str) -> list[str]:
        pieces: list[str] = []
        while word:
            size = max(1, len(word) * self._target // max(1, self._count(word)))
            while size > 1 and self._count(word[:size]) > self._target:
                size = size * 9 // 10
            pieces.append(word[:size])
            word = word[size:]
        return pieces

    # Packing -------------------------------------------------------------------------------------

    def _pack(self, units: list[_Unit]) -> list[tuple[int, int]]:
        """Split units into runs: fewest breaks after a heading line, then fewest chunks, then
        fewest breaks inside a block, then the most even sizes (sum of squares). A run's size is
        the sum of its units' sizes."""
        n = len(units)
        best: list[tuple[int, int, int, int] | None] = [None] * (n + 1)
        best[0] = (0, 0, 0, 0)
        start_of = [0] * (n + 1)
        for end in range(1, n + 1):
            size = self._overhead
            for start in range(end - 1, -1, -1):
                size += self._content(units[start].tokens)
                if end - start > 1 and (
                    size > self._target or _shares_group(units[start], units[start + 1])
                ):
                    break
                previous = best[start]
                if previous is None:
                    continue
                weak_break = int(start > 0 and units[start].separator == "\n")
                head_break = units[end - 1].heads if end < n else 0
                cost = (
                    previous[0] + head_break,
                    previous[1] + 1,
                    previous[2] + weak_break,
                    previous[3] + size * size,
                )
                current = best[end]
                if current is None or cost < current:
                    best[end] = cost
                    start_of[end] = start
        runs: list[tuple[int, int]] = []
        end = n
        while end > 0:
            runs.append((start_of[end], end))
            end = start_of[end]
        return runs[::-1]

    @staticmethod
    def _join(units: Sequence[_Unit]) -> str:
        text = units[0].text
        for unit in units[1:]:
            text += unit.separator + unit.text
        return text

    def _enforce_limit(self, chunk: str) -> list[str]:
        if self._count(chunk) <= self._limit:
            return [chunk]
        return self._word_pieces(chunk)


def heads(text: str) -> int:
    """How badly a chunk ending with ``text`` breaks what its last line heads: 2 for a line
    ending with a colon ("hồ sơ gồm:" says what follows is the answer), 1 for a line set in
    bold alone (a heading: the next chunk is still read without it), else 0."""
    last = text.rstrip().rsplit("\n", 1)[-1].strip()
    if last.strip("*_ ").endswith(":"):
        return 2
    return int(len(last) > 4 and last[:2] == last[-2:] and last[:2] in ("**", "__"))


def _captions(unit: _Unit) -> bool:
    """Whether a unit just before a table names it: one short line, not a sentence."""
    text = unit.text.strip()
    return (
        "\n" not in text
        and unit.tokens <= _CAPTION_TOKENS
        and not text.rstrip("*_ ").endswith((".", "!", "?", ";"))
    )


def _shares_group(first: _Unit, second: _Unit) -> bool:
    return first.group is not None and first.group == second.group


def _blocks(text: str) -> Iterator[tuple[str, list[str], str]]:
    """(kind, lines, separator before it): paragraphs, tables and fenced code, in order."""
    kind = ""
    lines: list[str] = []
    separator = "\n\n"
    next_separator = "\n\n"
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            lines.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if not line.strip():
            if lines:
                yield kind, lines, separator
                lines = []
            next_separator = "\n\n"
            continue
        fence_match = FENCE.match(line)
        line_kind = "fence" if fence_match else "table" if line.lstrip().startswith("|") else "text"
        if lines and (line_kind != kind or kind == "fence"):
            yield kind, lines, separator
            lines = []
            next_separator = "\n"
        if not lines:
            kind, separator = line_kind, next_separator
        lines.append(line)
        if fence_match:
            fence = fence_match.group(1)
    if lines:
        yield kind, lines, separator
