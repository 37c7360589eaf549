"""Tier 2 without an LLM: quote the pieces of the retrieved chunks that best fit the question.

Nothing is generated: every quote is made of verbatim pieces of a chunk, tagged with the number
of its source. The units quoted are sentences, list items and table rows:

- a table row is quoted with its column headers ("Ngành học: Kỹ thuật phần mềm; Chỉ tiêu: 240"),
  so that a number says what it is and a question naming a column ("chỉ tiêu") finds its rows;
  a row-number column (STT) is left out, and the section heading leads the row ("2023 — …");
- a unit is scored by the question's keyword terms it contains, weighted by how rare each term is
  among the candidate units; terms only its context holds (the chunk's heading path, or a short
  label line just before it, such as "II. CHỈ TIÊU TUYỂN SINH" over "30 chỉ tiêu.") count half,
  and the label is quoted with it; a small prior favours the better-ranked chunks;
- a quoted unit that ends with ":" brings the list items, rows or "field: value" lines after it;
- Markdown is reduced to its text: links to their words, escapes and emphasis dropped.

With the same retrieved chunks, the share of document answers holding every key fact (the
answer benchmark that became `tuvan eval questions`) went from 0.34 to 0.49 on the UIT set,
0.32 to 0.58 on the demo KB and 0.78 to 0.83 on ALQAC with three quotes; four quotes (the
default) reach 0.55, 0.63 and 0.85.
Tier 2 abstains (the fallback answers) when no chunk holds enough of the question: see
``MIN_EVIDENCE``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.search import Hit
from retrieval.text import TextProcessor, ends_with_abbreviation, fold

# A sentence ends at . ! ? … followed by a space and a capital/digit, but not inside numbers
# such as 28.5, 40.000.000 or dates; lines (table rows, list items) are units of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"“(\[]?[A-ZÀ-Ỹ0-9Đ])")
# "VI." or "2.1." before a heading's words is its number, not a sentence of its own.
_ENUMERATOR = re.compile(r"^(?:[IVXLC]+|\d{1,2}(?:\.\d{1,2})*|[a-zđ])[.)]$")
_MAX_SENTENCE_CHARS = 600
_MAX_QUOTE_CHARS = 900  # a unit with the items it introduces
_FOLLOW_ITEMS = 8  # at most this many items after a unit that ends with ":"
_LABEL_CHARS = 80  # a line this short without a full stop may label the next one
# Bullets, including the private-use glyphs Word's Symbol font leaves in pasted lists.
_BULLET = re.compile(r"^(?:[-*+•▪◦●\uf0a7\uf0b7\uf076\uf0d8]|o(?=\s+[A-ZÀ-ỸĐ]))\s+")
_NUMBERED = re.compile(r"^(?:\d{1,2}[.)]|[a-zđ]\))\s+")
_LIST_MARKER = re.compile(f"{_BULLET.pattern}|{_NUMBERED.pattern}")
_HEADING_MARK = re.compile(r"^#{1,6}\s+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^)]*\))*\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>])")
_SPACE_BEFORE_MARK = re.compile(r"\s+([.,;:!?])(?=\s|$)")
_HAS_WORD = re.compile(r"\w")
_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
# "Số tài khoản: 314.100.01210304": a field of a form, listed after "theo thông tin sau:".
_FIELD = re.compile(r"^[^:.;]{1,40}:\s*\S.{0,160}$")
# Below this share of the question (see _evidence) the chunks passed t_doc on embedding
# similarity alone: "Thời tiết TP.HCM ngày mai thế nào?" meets admissions pages at cosine 0.8+
# through "TP.HCM" only, and quoting them would answer something else. At 0.25, 1 of the 585
# answerable questions of the UIT, demo and ALQAC sets (one whose quotes missed anyway) and 3 of
# their 12 out-of-scope ones went to the fallback; at 0.30, 9 answerable ones and 7.
MIN_EVIDENCE = 0.25
_ROW_NUMBER_HEADERS = frozenset({"stt", "tt", "#", "no", "no.", "so tt", "so thu tu"})


FAQ_FIRST = 1000.0  # added to the score of an FAQ passage's units


@dataclass(frozen=True)
class Quote:
    source_n: int  # the citation number of the hit it comes from
    hit_index: int
    position: int
    text: str
    score: float


@dataclass(frozen=True)
class _Unit:
    text: str
    label: int | None = None  # position of the short line that labels this one
    item: bool = False  # a list item or a table row
    row: bool = False  # a table row

    @property
    def introduces(self) -> bool:
        return self.text.endswith(":")


def _clean(line: str) -> str:
    line = _IMAGE.sub("", line)
    line = _LINK.sub(lambda m: m.group(1), line)
    line = _ESCAPE.sub(r"\1", line)
    line = _HEADING_MARK.sub("", line.strip())
    line = _LIST_MARKER.sub("", line)
    return _SPACE_BEFORE_MARK.sub(r"\1", " ".join(_EMPHASIS.sub("", line).split()))


def _is_label(text: str) -> bool:
    """A short line without a full stop: a heading or the name of what follows."""
    return len(text) <= _LABEL_CHARS and not text.endswith((".", "!", "?", "…", ";"))


def _cells(line: str) -> list[str] | None:
    """The cells of a Markdown table row, or None if the line is not one."""
    stripped = line.strip()
    if not (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1):
        return None
    return [_clean(p) for p in re.split(r"(?<!\\)\|", stripped[1:-1])]


def _is_separator(cells: list[str]) -> bool:
    return any(cells) and all(_SEPARATOR_CELL.match(c.replace(" ", "")) for c in cells if c)


def _cut(text: str) -> str:
    if len(text) <= _MAX_SENTENCE_CHARS:
        return text
    return text[:_MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"


def _split(line: str) -> list[str]:
    out = []
    pending = ""
    for part in _SENTENCE_END.split(line):
        part = part.strip()
        # "VI." before a heading is its number; "… Quốc gia TP." before "Hồ Chí Minh" is an
        # abbreviation: neither ends a sentence.
        if _ENUMERATOR.match(part) or ends_with_abbreviation(part):
            pending = f"{pending}{part} "
            continue
        part, pending = pending + part, ""
        if part:
            out.append(_cut(part))
    if pending.strip():
        out.append(pending.strip())
    return out


def _table_rows(rows: list[list[str]]) -> list[str]:
    """Data rows as "header: cell; …". The header is the row above the separator, or the first
    row under it when the row above is empty (HTML tables without a <thead>)."""
    sep = next((i for i, r in enumerate(rows) if _is_separator(r)), None)
    header: list[str] = []
    body = rows
    if sep is not None:
        above = [r for r in rows[:sep] if any(r)]
        body = rows[sep + 1 :]
        if above:
            header = above[-1]
        elif len(body) > 1:
            header, body = body[0], body[1:]
    out = []
    for row in body:
        if not any(row) or _is_separator(row):
            continue
        pairs = []
        for i, cell in enumerate(row):
            name = header[i] if i < len(header) else ""
            if not cell or fold(name) in _ROW_NUMBER_HEADERS:
                continue
            pairs.append(f"{name}: {cell}" if name and name != cell else cell)
        if pairs:
            out.append(_cut("; ".join(pairs)))
    return out


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    table: list[list[str]] = []
    label: int | None = None

    def add(piece: str, *, item: bool) -> None:
        nonlocal label
        units.append(_Unit(piece, label, item=item))
        label = len(units) - 1 if _is_label(piece) else None

    def flush_table() -> None:
        nonlocal label
        units.extend(_Unit(row, label, item=True, row=True) for row in _table_rows(table))
        table.clear()
        label = None

    for raw in text.splitlines():
        cells = _cells(raw)
        if cells is not None:
            table.append(cells)
            continue
        if table:
            flush_table()
        bare = _HEADING_MARK.sub("", raw.strip())
        line = _clean(raw)
        if not _HAS_WORD.search(line.replace("_", "")):
            continue
        # "1. Đối tượng tuyển sinh" numbers a section; "1. Nộp đơn trước ngày 10/7." is an item.
        item = bool(_BULLET.match(bare)) or bool(_NUMBERED.match(bare) and not _is_label(line))
        for n, piece in enumerate(_split(line)):
            add(piece, item=item and n == 0)
    if table:
        flush_table()
    return units


def sentences(text: str) -> list[str]:
    """The quotable units of a chunk's text, in reading order (table rows with their headers)."""
    return [u.text for u in _units(text)]


def select_quotes(
    question_terms: Sequence[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    *,
    limit: int,
) -> list[Quote]:
    """The ``limit`` best units of ``hits`` for the question, in reading order."""
    terms = set(question_terms)
    per_hit = [_units(hit.text) for hit in hits]
    # (hit index, position, own terms, context-only terms)
    candidates: list[tuple[int, int, set[str], set[str]]] = []
    for hi, (hit, units) in enumerate(zip(hits, per_hit, strict=True)):
        heading = set(processor.query_terms(hit.heading_path)) & terms
        for pos, unit in enumerate(units):
            own = set(processor.query_terms(unit.text)) & terms
            context = set(heading)
            if unit.label is not None:
                context |= set(processor.query_terms(units[unit.label].text)) & terms
            candidates.append((hi, pos, own, context - own))
    if not candidates:
        return []
    df: dict[str, int] = {}
    for *_, own, context in candidates:
        for t in own | context:
            df[t] = df.get(t, 0) + 1
    n = len(candidates)

    def weight(found: set[str]) -> float:
        return sum(math.log(1 + n / df[t]) for t in found)

    if _evidence(terms, hits, processor, candidates, df, n) < MIN_EVIDENCE:
        return []
    # A published FAQ answer among the passages (tier 1 turned it down, the guard did not) is
    # staff-approved and about what is asked: it is quoted before any document.
    scored = sorted(
        (
            (
                weight(own)
                + 0.5 * weight(context)
                + 0.5 / (1 + hi)
                + (FAQ_FIRST if hits[hi].faq_id is not None else 0.0),
                hi,
                pos,
            )
            for hi, pos, own, context in candidates
        ),
        key=lambda s: (-s[0], s[1], s[2]),
    )

    chosen: list[Quote] = []
    seen: set[str] = set()
    covered: set[tuple[int, int]] = set()
    for score, hi, pos in scored:
        if len(chosen) >= limit:
            break
        if (hi, pos) in covered:
            continue
        text, used = _quote_text(
            per_hit[hi], pos, hits[hi], covered={p for h, p in covered if h == hi}
        )
        key = fold(text)
        if key in seen:
            continue  # the same passage in two documents (near-duplicate pages)
        seen.add(key)
        covered.update((hi, p) for p in used)
        chosen.append(Quote(hi + 1, hi, pos, text, score))
    return sorted(chosen, key=lambda q: (q.hit_index, q.position))


def _evidence(
    terms: set[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    candidates: Sequence[tuple[int, int, set[str], set[str]]],
    df: dict[str, int],
    n: int,
) -> float:
    """How much of the question the best chunk holds: the rarity-weighted share of the question's
    terms found in its text, heading path or title (a term no unit holds weighs the most)."""

    def weight(t: str) -> float:
        return math.log(1 + n / df[t]) if t in df else math.log(1 + n)

    total = sum(weight(t) for t in terms)
    if not total:
        return 0.0
    found: list[set[str]] = [set(processor.query_terms(hit.title)) & terms for hit in hits]
    for hi, _, own, context in candidates:
        found[hi] |= own | context
    return max(sum(weight(t) for t in f) / total for f in found)


def _quote_text(
    units: list[_Unit], pos: int, hit: Hit, *, covered: set[int]
) -> tuple[str, list[int]]:
    """The unit as quoted: after its label (or a table row after its section's heading), and
    followed by the items it introduces. Returns the text and the positions it used."""
    unit = units[pos]
    parts = []
    used = [pos]
    if unit.label is not None and unit.label not in covered:
        label = units[unit.label].text
        parts.append(label if label.endswith(":") else f"{label}:")
        used.append(unit.label)
    elif unit.row and hit.heading_path:
        heading = hit.heading_path.rsplit(" › ", 1)[-1].strip()
        if heading and len(heading) <= _LABEL_CHARS:
            parts.append(f"{heading} —")
    parts.append(unit.text)
    if unit.introduces:
        size = sum(len(p) for p in parts)
        for nxt in range(pos + 1, min(pos + 1 + _FOLLOW_ITEMS, len(units))):
            following = units[nxt]
            if nxt in covered or not (following.item or _FIELD.match(following.text)):
                break
            if size + len(following.text) > _MAX_QUOTE_CHARS:
                break
            end = "" if following.text.endswith((".", ";", ":", "…")) else ";"
            parts.append(following.text + end)
            used.append(nxt)
            size += len(following.text)
        if parts[-1].endswith(";"):
            parts[-1] = parts[-1][:-1] + "."
    return " ".join(parts), used


def render_quotes(quotes: Sequence[Quote]) -> str:
    return "\n".join(f"- {q.text} [{q.source_n}]" for q in quotes)
