"""The units a passage is quoted by: sentences, list items and table rows, cleaned of Markdown,
and the text a chosen unit is quoted with (its label, the items it introduces, its row headers).

A page's furniture (a letterhead, a signature, a page number, a web site's navigation:
retrieval.text.furniture) is no unit: it stays in the chunk for search but is never quoted, nor
quoted as the label of the line under it. A number is never cut at its thousands dot ("60." /
"000 đ/hồ sơ"), whether a line or a sentence end seems to fall there, and a line that opens in
lower case after one that did not end its sentence is read with it: a Markdown soft line break
("… nộp hồ sơ online tại" / "(sử dụng email sinh viên).") is no end of a unit
(retrieval.text.wrapping). A PDF's lines were joined when it was loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.answer.rows import NAME_HEADER, cut, render_row, row_text
from retrieval.search.hits import Hit
from retrieval.text.folding import fold
from retrieval.text.furniture import PageLine, furniture
from retrieval.text.sentences import ends_with_abbreviation
from retrieval.text.wrapping import close_thousands, continues_number, soft_break

# A sentence ends at . ! ? … followed by a space and a capital or a digit (``_starts_sentence``),
# never inside numbers such as 28.5, 40.000.000 or dates; lines (table rows, list items) are
# units of their own.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=\S)")
# "VI." or "2.1." before a heading's words is its number, not a sentence of its own.
_ENUMERATOR = re.compile(r"^(?:[IVXLC]+|\d{1,2}(?:\.\d{1,2})*|[a-zđ])[.)]$")
MAX_QUOTE_CHARS = 900  # a unit with the items it introduces
_FOLLOW_ITEMS = 8  # at most this many items after a unit that ends with ":"
_LABEL_CHARS = 80  # a line this short without a full stop may label the next one
_SECTION_COLUMNS = 3  # a table this wide may have rows that name its sections
# Bullets, including the private-use glyphs Word's Symbol font leaves in pasted lists.
_BULLET = re.compile(r"^(?:[-*+•▪◦●\uf0a7\uf0b7\uf076\uf0d8]|o(?=\s+[A-ZÀ-ỸĐ]))\s+")
_NUMBERED = re.compile(r"^(?:\d{1,2}[.)]|[a-zđ]\))\s+")
_LIST_MARKER = re.compile(f"{_BULLET.pattern}|{_NUMBERED.pattern}")
_HEADING_MARK = re.compile(r"^#{1,6}\s+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
# [words](url) and [words](url "title"): scraped pages write both, and a space before ")".
_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^)]*\))*(?:\s+\"[^\"]*\")?\s*\)")
# A link item and nothing else: a menu's entry, when several follow one another.
_LINK_ITEM = re.compile(rf"^\s*(?:[-*+•]|\d{{1,2}}[.)])\s+{_LINK.pattern}\s*$")
# What is left of a link whose words spread over several lines (a logo): "](https://… )".
_LINK_TAIL = re.compile(r"\]\((?:[^()\s]|\([^)]*\))*\s*\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>])")
_SPACE_BEFORE_MARK = re.compile(r"\s+([.,;:!?])(?=\s|$)")
_HAS_WORD = re.compile(r"\w")
_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
# "Số tài khoản: 314.100.01210304": a field of a form, listed after "theo thông tin sau:".
_FIELD = re.compile(r"^[^:.;]{1,40}:\s*\S.{0,160}$")
_ROW_NUMBER_HEADERS = frozenset({"stt", "tt", "#", "no", "no.", "so tt", "so thu tu"})


@dataclass(frozen=True)
class Unit:
    text: str
    label: int | None = None  # position of the short line that labels this one
    item: bool = False  # a list item or a table row
    cells: tuple[tuple[str, str], ...] = ()  # a table row: (column header, cell), in order
    table: int = 0  # which table of the chunk a row belongs to (1, 2, …)
    # The sentence that introduces this list item ("… thì bị phạt tù từ 06 tháng đến 03 năm:"
    # over "a) Với số lượng từ 500 cây đến dưới 3.000 cây."): the item is read and quoted with it.
    parent: int | None = None
    quoted: bool = False  # a piece of a paragraph in quotation marks
    step: int = 0  # which numbered list of the chunk it is (a piece of) an item of (1, 2, …)
    mark: str = ""  # a numbered item's number as the page writes it ("2.", "b)")

    @property
    def row(self) -> bool:
        return bool(self.cells)

    @property
    def introduces(self) -> bool:
        return self.text.endswith(":")


def _clean(line: str) -> str:
    line = _IMAGE.sub("", line)
    line = _LINK.sub(lambda m: m.group(1), line)
    line = _LINK_TAIL.sub("", line)
    line = _ESCAPE.sub(r"\1", line)
    line = _HEADING_MARK.sub("", line.strip())
    line = _LIST_MARKER.sub("", line)
    line = close_thousands(" ".join(_EMPHASIS.sub("", line).split()))
    return _SPACE_BEFORE_MARK.sub(r"\1", line)


def _is_section(cell: str) -> bool:
    """A table cell that names a part of the table: a label with a letter in it."""
    return _is_label(cell) and any(c.isalpha() for c in cell)


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


def _starts_sentence(part: str) -> bool:
    first = part.lstrip('"“([')[:1]
    return first.isupper() or first.isdigit()


def _split(line: str) -> list[str]:
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(line):
        # "… 28.5 điểm. và" is one sentence, and "3. 100" (a thousands dot spaced) one number.
        if pieces and (not _starts_sentence(piece) or continues_number(pieces[-1], piece)):
            pieces[-1] = f"{pieces[-1]} {piece}"
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
            out.append(cut(part))
    if pending.strip():
        out.append(pending.strip())
    return out


def _table_rows(rows: list[list[str]]) -> list[tuple[tuple[str, str], ...] | str]:
    """Data rows as (header, cell) pairs. The header is the row above the separator, or the
    first row under it when the row above is empty (HTML tables without a <thead>). A row that
    names a section of the table in its first cell alone ("CƠ SỞ ĐÀO TẠO PHÍA NAM (mã BVS)",
    "Năm 2024", the others empty) comes as that name: it labels the rows under it."""
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
    out: list[tuple[tuple[str, str], ...] | str] = []
    for row in body:
        if not any(row) or _is_separator(row):
            continue
        if len(row) >= _SECTION_COLUMNS and not any(row[1:]) and _is_section(row[0]):
            out.append(row[0])
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


def passage_units(text: str) -> list[Unit]:
    units: list[Unit] = []
    table: list[list[str]] = []
    label: int | None = None

    tables = 0
    head: int | None = None  # the last unit ending with ":", while items follow it

    steps = 0  # numbered lists so far; ``step`` is the one a line is an item of, or 0
    step = 0

    def add(piece: str, *, item: bool, quoted: bool, mark: str = "") -> None:
        nonlocal label, head
        if not item:
            head = None
        parent = head if item else None
        units.append(Unit(piece, label, item, quoted=quoted, parent=parent, step=step, mark=mark))
        label = len(units) - 1 if _is_label(piece) else None
        if piece.endswith(":"):
            head = len(units) - 1

    def flush_table() -> None:
        nonlocal label, tables
        tables += 1
        over = label  # the line over the table, then each section row for the rows under it
        for row in _table_rows(table):
            if isinstance(row, str):
                units.append(Unit(row, label, table=tables))
                over = len(units) - 1
            else:
                units.append(Unit(row_text(row), over, item=True, cells=row, table=tables))
        table.clear()
        label = None

    lines = _soft_breaks(text.splitlines())
    rows = [_cells(raw) for raw in lines]
    cleaned = [_clean(raw) if row is None else "" for raw, row in zip(lines, rows, strict=True)]
    skipped = furniture([_page_line(*line) for line in zip(lines, cleaned, rows, strict=True)])
    for n, (raw, cells) in enumerate(zip(lines, rows, strict=True)):
        if cells is not None:
            table.append(cells)
            step = 0
            continue
        if table:
            flush_table()
        if n in skipped:
            continue
        bare = _HEADING_MARK.sub("", raw.strip())
        line = cleaned[n]
        if not _HAS_WORD.search(line.replace("_", "")):
            continue
        # "1. Đối tượng tuyển sinh" numbers a section; "1. Nộp đơn trước ngày 10/7." is an item.
        number = _NUMBERED.match(bare)
        numbered = bool(number and not _is_label(line))
        item = bool(_BULLET.match(bare)) or numbered
        if numbered and not step:
            steps += 1
        step = steps if numbered else 0
        mark = number.group(0).strip() if number and numbered else ""
        # A paragraph in quotation marks is someone's words (a testimonial), not a fact.
        quoted = line.startswith(('"', "“")) and len(line) > _LABEL_CHARS
        for n, piece in enumerate(_split(line)):
            add(piece, item=item and n == 0, quoted=quoted, mark=mark if n == 0 else "")
    if table:
        flush_table()
    return units


def _soft_breaks(lines: list[str]) -> list[str]:
    """``lines`` with each line that goes on with the sentence of the line before joined to it
    ("Lệ phí: 60." / "000 đ/hồ sơ"); never a table row, a heading or a line after either."""
    out: list[str] = []
    for line in lines:
        previous = out[-1] if out else ""
        prose = not _HEADING_MARK.match(previous.lstrip()) and _cells(previous) is None
        glue = soft_break(previous, line) if prose and _cells(line) is None else None
        if glue is None:
            out.append(line)
        else:
            out[-1] = f"{previous.rstrip()}{glue}{line.strip()}"
    return out


def _page_line(raw: str, cleaned: str, row: list[str] | None) -> PageLine:
    """A line as the furniture rules read it; a table row is none of theirs ("…" ends their
    runs, as a line of prose does)."""
    if row is not None:
        return PageLine("…")
    bare = _HEADING_MARK.sub("", raw.strip())
    item = bool(_BULLET.match(bare) or _NUMBERED.match(bare))
    return PageLine(cleaned, item=item, link=bool(_LINK_ITEM.match(raw)))


def sentences(text: str) -> list[str]:
    """The quotable units of a chunk's text, in reading order (table rows with their headers)."""
    return [u.text for u in passage_units(text)]


def with_items(units: Sequence[Unit], pos: int) -> str:
    """A unit's text and, when it ends with ":", the items it introduces."""
    texts = [units[pos].text]
    if units[pos].introduces:
        for following in units[pos + 1 : pos + 1 + _FOLLOW_ITEMS]:
            if not (following.item or _FIELD.match(following.text)):
                break
            texts.append(following.text)
    return "\n".join(texts)


def table_names(units: list[Unit], pos: int, hit: Hit) -> tuple[str, list[int]]:
    """A list question answered by a table: what each of its rows is about, on one line
    ("Ngành đào tạo 2026: Khoa học Máy tính; Kỹ thuật Phần mềm; …")."""
    table = units[pos].table
    first = last = pos
    while first > 0 and units[first - 1].table == table:
        first -= 1
    while last + 1 < len(units) and units[last + 1].table == table:
        last += 1
    rows = [u.cells for u in units[first : last + 1] if u.row]
    headers = [h for h, _ in max(rows, key=len)]
    name = next((h for h in headers if NAME_HEADER.search(fold(h))), headers[0])
    names = [next((c for h, c in row if h == name), row[0][1]) for row in rows]
    # The line over the table (a section row's label is the table's, not every row's).
    over = units[first].label
    title = units[over].text if over is not None else ""
    title = title or hit.heading_path.rsplit(" › ", 1)[-1].strip() or name
    text = f"{title.rstrip(':')}: {'; '.join(dict.fromkeys(names))}."
    if len(text) > MAX_QUOTE_CHARS:
        text = text[:MAX_QUOTE_CHARS].rsplit(";", 1)[0] + "; …"
    used = list(range(first, last + 1))
    if over is not None:
        used.append(over)
    return text, used


def quote_text(
    units: list[Unit],
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
    parts.append(render_row(unit.cells, asked) if unit.row and asked else unit.text)
    if unit.introduces:
        size = sum(len(p) for p in parts)
        for nxt in range(pos + 1, min(pos + 1 + _FOLLOW_ITEMS, len(units))):
            following = units[nxt]
            if nxt in covered or not (following.item or _FIELD.match(following.text)):
                break
            if size + len(following.text) > MAX_QUOTE_CHARS:
                break
            end = "" if following.text.endswith((".", ";", ":", "…")) else ";"
            parts.append(following.text + end)
            used.append(nxt)
            size += len(following.text)
        if parts[-1].endswith(";"):
            parts[-1] = parts[-1][:-1] + "."
    return " ".join(parts), used
