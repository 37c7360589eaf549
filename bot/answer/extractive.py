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

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets
from retrieval.search.hits import Hit
from retrieval.text.folding import fold
from retrieval.text.sentences import ends_with_abbreviation
from retrieval.text.terms import TextProcessor, tokens

# A sentence ends at . ! ? … followed by a space and a capital or a digit (``_starts_sentence``),
# never inside numbers such as 28.5, 40.000.000 or dates; lines (table rows, list items) are
# units of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=\S)")
# "VI." or "2.1." before a heading's words is its number, not a sentence of its own.
_ENUMERATOR = re.compile(r"^(?:[IVXLC]+|\d{1,2}(?:\.\d{1,2})*|[a-zđ])[.)]$")
_MAX_SENTENCE_CHARS = 600
_SAME_CHARS = 60  # a quote this long inside one already chosen says nothing more
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


FAQ_BONUS = 0.6  # times the question's weight: the unit is a published FAQ answer's
FACTOID_QUOTES = 3  # at most this many units answer a question that asks no list
CLOSE = 0.7  # a factoid's later units score at least this share of the first one's
KIND_BONUS = 0.3  # times the question's weight: the unit holds the kind of value asked
MIN_LISTED = 2  # values a unit must name to answer "những ngành nào"
LIST_BONUS = 0.3  # times the question's weight: a list question, a unit that lists
PHRASE_BONUS = 0.5  # times the share of the question's word pairs the unit holds
ENTITY_BONUS = 0.15  # per entity category the unit names as the question does (two at most)
FILLER_FACTOR = 0.5  # a testimonial or a slogan
# "những ngành nào": a list of the values of a guard category, which the answer must name.
_LISTED = {
    "nganh": "major",
    "phuong thuc": "method",
    "to hop": "combination",
    "co so": "campus",
}
# "những ngành nào", "gồm những gì", "các phương thức": the question asks for a list.
_LISTING = re.compile(
    r"\b(?:nhung \w+(?: \w+)? (?:nao|gi|j)|nhung gi|gom (?:nhung|co)|bao gom|"
    r"cac \w+(?: \w+)? (?:nao|gi)|liet ke|danh sach|may (?:nganh|phuong thuc|loai|buoc)|"
    r"which|what are|list)\b"
)
# A testimonial ("“Em đã chọn…” – Nguyễn Văn A, K2024") or a slogan: words without facts.
_FILLER = re.compile(
    r"^[\"“]|[”\"]\s*[-–—]\s*\w|\b(?:em|mình|tôi|chúng em) (?:đã|rất|thấy|cảm thấy|yêu|chọn)\b|"
    r"\b(?:tầm nhìn|sứ mạng|sứ mệnh|giá trị cốt lõi|hàng đầu|năng động|sáng tạo và|chào mừng|"
    r"vision|mission)\b",
    re.IGNORECASE,
)
_NAME_HEADER = re.compile(
    r"\b(?:nganh|ten|chuong trinh|bo phan|kenh|doi tuong|phuong thuc|hang muc|khoan|loai|"
    r"programme|program|major|name|item)\b"
)
_CODE_HEADER = re.compile(r"^(?:ma|code)\b")


@dataclass(frozen=True)
class Quote:
    source_n: int  # the citation number of the hit it comes from
    hit_index: int
    position: int
    text: str
    score: float


@dataclass(frozen=True)
class Reading:
    """What a question asks, as tier 2 reads it (3/6, with the near-miss guard's vocabulary):
    the kinds of value asked (a phone number, an amount, a date...), whom or what it is about
    (a major, a year, a method...), and whether it asks for a list."""

    kinds: frozenset[str] = frozenset()  # asked in so many words: none held, no answer
    hints: frozenset[str] = frozenset()  # those of the attributes it names: favoured
    entities: Facets = field(default_factory=dict)
    listing: bool = False
    pairs: frozenset[tuple[str, str]] = frozenset()  # its adjacent folded words
    listed: str | None = None  # "những ngành nào" lists values of a category (major)


def read_question(
    question: str, guard: NearMissGuard | None, processor: TextProcessor | None = None
) -> Reading:
    listing = bool(_LISTING.search(fold(question)))
    pairs = _pairs(question)
    if processor is not None:
        # Pairs of words that say something: not "ngành nào", "là bao", "có những".
        pairs = frozenset(
            p for p in pairs if processor.query_terms(p[0]) and processor.query_terms(p[1])
        )
    if guard is None:
        return Reading(listing=listing, pairs=pairs)
    kinds = guard.asked_kinds(question)
    listed = next(
        (
            c
            for noun, c in _LISTED.items()
            if re.search(rf"\b(?:nhung|cac|may) {noun}\b", fold(question))
        ),
        None,
    )
    return Reading(
        kinds,
        kinds | guard.hinted_kinds(question),
        guard.entities(question),
        listing,
        pairs,
        listed if listing else None,
    )


def _pairs(text: str) -> frozenset[tuple[str, str]]:
    words = tokens(text)
    return frozenset(itertools.pairwise(words))


@dataclass(frozen=True)
class _Unit:
    text: str
    label: int | None = None  # position of the short line that labels this one
    item: bool = False  # a list item or a table row
    cells: tuple[tuple[str, str], ...] = ()  # a table row: (column header, cell), in order
    table: int = 0  # which table of the chunk a row belongs to (1, 2, …)
    # The sentence that introduces this list item ("… thì bị phạt tù từ 06 tháng đến 03 năm:"
    # over "a) Với số lượng từ 500 cây đến dưới 3.000 cây."): the item is read and quoted with it.
    parent: int | None = None
    quoted: bool = False  # a piece of a paragraph in quotation marks

    @property
    def row(self) -> bool:
        return bool(self.cells)

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
    """A short line without a full stop: a heading or the name of what follows. Not a lone
    lower-case word (a page's author, "admintuyensinh", scraped above its text)."""
    if len(text) > _LABEL_CHARS or text.endswith((".", "!", "?", "…", ";")):
        return False
    return not re.fullmatch(r"[a-z0-9_]+:?", text)


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


def _starts_sentence(part: str) -> bool:
    first = part.lstrip('"“([')[:1]
    return first.isupper() or first.isdigit()


def _split(line: str) -> list[str]:
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(line):
        if pieces and not _starts_sentence(piece):
            pieces[-1] = f"{pieces[-1]} {piece}"  # "… 28.5 điểm. và" is one sentence
        else:
            pieces.append(piece)
    out = []
    pending = ""
    for part in pieces:
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


def _table_rows(rows: list[list[str]]) -> list[tuple[tuple[str, str], ...]]:
    """Data rows as (header, cell) pairs. The header is the row above the separator, or the
    first row under it when the row above is empty (HTML tables without a <thead>)."""
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
            pairs.append((name if name != cell else "", cell))
        if pairs:
            out.append(tuple(pairs))
    return out


def _row_text(cells: Sequence[tuple[str, str]]) -> str:
    """A row as read for scoring, and quoted when nothing is asked of it: "header: cell; …"."""
    return _cut("; ".join(f"{h}: {c}" if h else c for h, c in cells))


def _render_row(cells: Sequence[tuple[str, str]], asked: Callable[[str, str], bool]) -> str:
    """A row as a short line, what it is about first, then the columns asked, then the rest:
    "Kỹ thuật Phần mềm (7480103): chỉ tiêu 2026 là 200; tổ hợp xét tuyển: A00, A01"."""
    if not any(h for h, _ in cells):
        return _row_text(cells)
    name = next((i for i, (h, c) in enumerate(cells) if _NAME_HEADER.search(fold(h))), 0)
    code = next(
        (
            i
            for i, (h, c) in enumerate(cells)
            if i != name and _CODE_HEADER.match(fold(h)) and len(c) <= 20
        ),
        None,
    )
    head = cells[name][1] + (f" ({cells[code][1]})" if code is not None else "")
    rest = [(h, c) for i, (h, c) in enumerate(cells) if i not in (name, code)]
    if not rest:
        return _cut(f"{cells[name][0]}: {head}" if cells[name][0] else head)
    first = [(h, c) for h, c in rest if asked(h, c)]
    said = [
        f"{_lower(h)} {'là' if _vietnamese(h) else ':'} {c}".replace(" :", ":") for h, c in first
    ]
    said += [f"{_lower(h)}: {c}" if h else c for h, c in rest if (h, c) not in first]
    return _cut(f"{head}: {'; '.join(said)}")


def _lower(header: str) -> str:
    """ "Chỉ tiêu 2026" → "chỉ tiêu 2026"; an acronym ("ĐGNL", "IELTS") stays."""
    if len(header) > 1 and header[1].islower():
        return header[0].lower() + header[1:]
    return header


def _vietnamese(text: str) -> bool:
    return fold(text) != text.lower()


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    table: list[list[str]] = []
    label: int | None = None

    tables = 0
    head: int | None = None  # the last unit ending with ":", while items follow it

    def add(piece: str, *, item: bool, quoted: bool) -> None:
        nonlocal label, head
        if not item:
            head = None
        units.append(_Unit(piece, label, item=item, quoted=quoted, parent=head if item else None))
        label = len(units) - 1 if _is_label(piece) else None
        if piece.endswith(":"):
            head = len(units) - 1

    def flush_table() -> None:
        nonlocal label, tables
        tables += 1
        units.extend(
            _Unit(_row_text(row), label, item=True, cells=row, table=tables)
            for row in _table_rows(table)
        )
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
        # A paragraph in quotation marks is someone's words (a testimonial), not a fact.
        quoted = line.startswith(('"', "“")) and len(line) > _LABEL_CHARS
        for n, piece in enumerate(_split(line)):
            add(piece, item=item and n == 0, quoted=quoted)
    if table:
        flush_table()
    return units


def sentences(text: str) -> list[str]:
    """The quotable units of a chunk's text, in reading order (table rows with their headers)."""
    return [u.text for u in _units(text)]


def about_first(hits: Sequence[Hit], reading: Reading, guard: NearMissGuard | None) -> list[Hit]:
    """``hits`` in their order, those that name another value than the question (another
    year, major, method: in their title, heading path or text, and none of the question's)
    after the others."""
    if guard is None or not reading.entities:
        return list(hits)

    def other(hit: Hit) -> bool:
        named = guard.entities(f"{hit.title}\n{hit.heading_path}\n{hit.text}")
        return any(
            named.get(c) and asked.isdisjoint(named[c]) for c, asked in reading.entities.items()
        )

    return sorted(hits, key=other)


def select_quotes(
    question_terms: Sequence[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    *,
    limit: int,
    reading: Reading | None = None,
    guard: NearMissGuard | None = None,
) -> list[Quote]:
    """The best units of ``hits`` for the question, in reading order; [] to abstain.

    With a ``reading`` (3/6), a unit that names another value than the question in one of the
    entity categories (another major, year, method) is never quoted; a unit holding the kind of
    value asked leads, and when none does the answer abstains; a factoid gets at most
    ``FACTOID_QUOTES`` units, each close to the best one's score; a list question up to
    ``limit``."""
    terms = set(question_terms)
    reading = reading or Reading()
    per_hit = [_units(hit.text) for hit in hits]
    scored = _ranked(terms, hits, per_hit, processor, reading, guard)
    if not scored:
        return []  # too little of the question, or every unit about another major, year...
    if reading.kinds and guard is not None:
        # Asked for a phone number, an amount, a date...: only units holding one answer, and
        # when none does, no answer beats a wrong one.
        scored = [s for s in scored if s[1].answers]
        if not scored:
            return []
    if reading.listed and guard is not None:
        # "Những ngành nào": only a unit that names some (with the items or rows it heads).
        scored = [
            s
            for s in scored
            if _names(guard, reading.listed, per_hit[s[1].hit_index], s[1].position)
        ]
        if not scored:
            return []
    lead = scored[0][0]
    most = limit if reading.listing else min(limit, FACTOID_QUOTES)

    asked = _asked_column(terms, processor, reading, guard)
    chosen: list[Quote] = []
    seen: set[str] = set()
    covered: set[tuple[int, int]] = set()
    for score, c in scored:
        if len(chosen) >= most or (not reading.listing and chosen and score < CLOSE * lead):
            break
        hi, pos = c.hit_index, c.position
        if (hi, pos) in covered:
            continue
        if reading.listing and per_hit[hi][pos].row:
            text, used = _table_names(per_hit[hi], pos, hits[hi])
        else:
            text, used = _quote_text(
                per_hit[hi],
                pos,
                hits[hi],
                covered={p for h, p in covered if h == hi},
                asked=asked,
            )
        key = " ".join(tokens(text))
        if any(key == s or (len(key) > _SAME_CHARS and key in s) for s in seen):
            continue  # the same passage in two documents (near-duplicate pages)
        seen.add(key)
        covered.update((hi, p) for p in used)
        chosen.append(Quote(hi + 1, hi, pos, text, score))
    return sorted(chosen, key=lambda q: (q.hit_index, q.position))


def _ranked(
    terms: set[str],
    hits: Sequence[Hit],
    per_hit: Sequence[list[_Unit]],
    processor: TextProcessor,
    reading: Reading,
    guard: NearMissGuard | None,
) -> list[tuple[float, _Candidate]]:
    """Every unit that may be quoted, best first with its score; [] when the chunks hold too
    little of the question (``MIN_EVIDENCE``)."""
    candidates: list[_Candidate] = []
    for hi, (hit, units) in enumerate(zip(hits, per_hit, strict=True)):
        heading = set(processor.query_terms(hit.heading_path)) & terms
        # What the title already says every unit of the page is about: a unit restating it
        # ("Trường thông báo tuyển sinh chương trình liên thông…") has no more of the question.
        titled = set(processor.query_terms(hit.title)) & terms
        title_pairs = _pairs(hit.title)
        about = _About(guard, reading, f"{hit.title}\n{hit.heading_path}")
        # Each unit read once: labels and list heads are read again for the units under them.
        held = [set(processor.query_terms(u.text)) & terms for u in units]
        pairs = [_pairs(u.text) if reading.pairs else frozenset() for u in units]
        for pos, unit in enumerate(units):
            own = held[pos] | titled
            context = set(heading)
            label = units[unit.label].text if unit.label is not None else ""
            if unit.label is not None:
                context |= held[unit.label]
            parent = units[unit.parent].text if unit.parent is not None else ""
            if unit.parent is not None:
                context |= held[unit.parent]
            whole_text = f"{parent}\n{_with_items(units, pos)}"
            candidates.append(
                _Candidate(
                    hi,
                    pos,
                    own,
                    context - own,
                    agrees=about.agrees(unit.text, f"{label}\n{parent}"),
                    holds=_holds(guard, reading.hints, whole_text),
                    answers=_holds(guard, reading.kinds, whole_text),
                    filler=unit.quoted or bool(_FILLER.search(unit.text)),
                    phrase=len(
                        reading.pairs
                        & (pairs[pos] | (pairs[unit.parent] if unit.parent is not None else set()))
                        | (reading.pairs & title_pairs)
                    )
                    / len(reading.pairs)
                    if reading.pairs
                    else 0.0,
                    lists=reading.listing and (unit.row or unit.introduces),
                )
            )
    if not candidates:
        return []
    df: dict[str, int] = {}
    for c in candidates:
        for t in c.own | c.context:
            df[t] = df.get(t, 0) + 1
    n = len(candidates)

    def weight(found: set[str]) -> float:
        # Exactly rounded: a set's order changes with each process's string hashing, and a
        # plain float sum with it, enough to flip a unit at the CLOSE cut between two runs.
        return math.fsum(math.log(1 + n / df[t]) for t in found)

    if _evidence(terms, hits, processor, candidates, df, n) < MIN_EVIDENCE:
        return []
    whole = weight(set(df))  # every question term some unit holds
    return sorted(
        (
            (_score(c, weight, whole, hits[c.hit_index].faq_id is not None), c)
            for c in candidates
            if c.agrees is not None
        ),
        key=lambda s: (-s[0], s[1].hit_index, s[1].position),
    )


@dataclass(frozen=True)
class _Candidate:
    hit_index: int
    position: int
    own: set[str]  # the question's terms the unit holds
    context: set[str]  # those only its heading path or label holds
    agrees: int | None  # entity categories it names as the question does; None: it conflicts
    holds: bool  # it holds a value of a kind asked or hinted
    answers: bool  # it holds a value of a kind asked
    filler: bool  # a testimonial, a slogan: words without facts
    phrase: float  # the share of the question's word pairs it holds
    lists: bool  # a list question, and the unit is a table row or introduces a list


def _score(c: _Candidate, weight: Callable[[set[str]], float], whole: float, faq: bool) -> float:
    score = weight(c.own) + 0.5 * weight(c.context) + 0.5 / (1 + c.hit_index)
    score += whole * (
        KIND_BONUS * c.holds
        + ENTITY_BONUS * min(c.agrees or 0, 2)
        + PHRASE_BONUS * c.phrase
        + LIST_BONUS * c.lists
    )
    if c.filler:
        score *= FILLER_FACTOR
    # A published FAQ answer among the passages (tier 1 turned it down, the guard did not) is
    # staff-approved and about what is asked: it is favoured, as much as holding the kind of
    # value asked and a listing's items together.
    return score + whole * FAQ_BONUS * faq


class _About:
    """Whether a unit is about what the question names: the values it names in the entity
    categories (or, when it names none of a category, those of its label, heading path and
    title) against the question's. None when some category names only other values."""

    def __init__(self, guard: NearMissGuard | None, reading: Reading, context: str) -> None:
        self.guard = guard if reading.entities else None
        self.asked = reading.entities
        self.context = self.guard.entities(context) if self.guard is not None else {}

    def agrees(self, text: str, label: str) -> int | None:
        if self.guard is None:
            return 0
        named = self.guard.entities(text)
        labelled = self.guard.entities(label) if label else {}
        agree = 0
        for category, asked in self.asked.items():
            values = named.get(category) or labelled.get(category) or self.context.get(category)
            if not values:
                if category in self.guard.named_by_answers:
                    return None  # another school asked: a unit must name it
                continue
            if asked.isdisjoint(values):
                return None
            agree += 1
        return agree


def _names(guard: NearMissGuard, category: str, units: list[_Unit], pos: int) -> bool:
    """Whether the unit, with the items it introduces or the rest of its table, names two
    values of ``category`` or more."""
    unit = units[pos]
    text = (
        "\n".join(u.text for u in units if u.table == unit.table)
        if unit.row
        else _with_items(units, pos)
    )
    return len(guard.facets(text).get(category, ())) >= MIN_LISTED


def _holds(guard: NearMissGuard | None, kinds: frozenset[str], text: str) -> bool:
    return bool(kinds) and guard is not None and guard.holds(kinds, text)


def _with_items(units: Sequence[_Unit], pos: int) -> str:
    """A unit's text and, when it ends with ":", the items it introduces."""
    texts = [units[pos].text]
    if units[pos].introduces:
        for following in units[pos + 1 : pos + 1 + _FOLLOW_ITEMS]:
            if not (following.item or _FIELD.match(following.text)):
                break
            texts.append(following.text)
    return "\n".join(texts)


def _asked_column(
    terms: set[str], processor: TextProcessor, reading: Reading, guard: NearMissGuard | None
) -> Callable[[str, str], bool]:
    """Whether a table column is what the question asks: its header holds a question term,
    or its cell the kind of value asked."""

    def asked(header: str, cell: str) -> bool:
        if set(processor.query_terms(header)) & terms:
            return True
        return _holds(guard, reading.hints, cell)

    return asked


def _evidence(
    terms: set[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    candidates: Sequence[_Candidate],
    df: dict[str, int],
    n: int,
) -> float:
    """How much of the question the best chunk holds: the rarity-weighted share of the question's
    terms found in its text, heading path or title (a term no unit holds weighs the most)."""

    def weight(t: str) -> float:
        return math.log(1 + n / df[t]) if t in df else math.log(1 + n)

    total = math.fsum(weight(t) for t in terms)
    if not total:
        return 0.0
    found: list[set[str]] = [set(processor.query_terms(hit.title)) & terms for hit in hits]
    for c in candidates:
        found[c.hit_index] |= c.own | c.context
    return max(math.fsum(weight(t) for t in f) / total for f in found)


def _quote_text(
    units: list[_Unit],
    pos: int,
    hit: Hit,
    *,
    covered: set[int],
    asked: Callable[[str, str], bool] | None = None,
) -> tuple[str, list[int]]:
    """The unit as quoted: after its label (or a table row after its section's heading), and
    followed by the items it introduces. Returns the text and the positions it used."""
    unit = units[pos]
    parts = []
    used = [pos]
    if unit.parent is not None and unit.parent not in covered and unit.parent != unit.label:
        parts.append(units[unit.parent].text)  # the sentence the item completes
        used.append(unit.parent)
    if unit.label is not None and unit.label not in covered:
        label = units[unit.label].text
        parts.append(label if label.endswith(":") else f"{label}:")
        used.append(unit.label)
    elif unit.row and hit.heading_path:
        heading = hit.heading_path.rsplit(" › ", 1)[-1].strip()
        if heading and len(heading) <= _LABEL_CHARS:
            parts.append(f"{heading} —")
    parts.append(_render_row(unit.cells, asked) if unit.row and asked else unit.text)
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


def _table_names(units: list[_Unit], pos: int, hit: Hit) -> tuple[str, list[int]]:
    """A list question answered by a table: what each of its rows is about, on one line
    ("Ngành đào tạo 2026: Khoa học Máy tính; Kỹ thuật Phần mềm; …")."""
    table = units[pos].table
    first = last = pos
    while first > 0 and units[first - 1].table == table:
        first -= 1
    while last + 1 < len(units) and units[last + 1].table == table:
        last += 1
    rows = [u.cells for u in units[first : last + 1]]
    headers = [h for h, _ in max(rows, key=len)]
    name = next((h for h in headers if _NAME_HEADER.search(fold(h))), headers[0])
    names = [next((c for h, c in row if h == name), row[0][1]) for row in rows]
    unit = units[pos]
    title = units[unit.label].text if unit.label is not None else ""
    title = title or hit.heading_path.rsplit(" › ", 1)[-1].strip() or name
    text = f"{title.rstrip(':')}: {'; '.join(dict.fromkeys(names))}."
    if len(text) > _MAX_QUOTE_CHARS:
        text = text[:_MAX_QUOTE_CHARS].rsplit(";", 1)[0] + "; …"
    used = list(range(first, last + 1))
    if unit.label is not None:
        used.append(unit.label)
    return text, used


def render_quotes(quotes: Sequence[Quote]) -> str:
    return "\n".join(f"- {q.text} [{q.source_n}]" for q in quotes)
