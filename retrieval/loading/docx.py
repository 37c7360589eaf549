"""Word .docx files, read with the standard library (zipfile + ElementTree).

A .docx is a ZIP of XML parts; the body is `word/document.xml`. Paragraphs in a heading style
("Heading 1".."Heading 9", Vietnamese "Tiêu đề 1" / "Đầu đề 1", or any style with an outline
level) build the heading path; the first "Title" paragraph is the document title. Auto-numbered
paragraphs get their number rendered from `word/numbering.xml` ("Điều 3.", "a)", "-"), because
Vietnamese regulations typed in Word often number their articles that way. Tables become
Markdown tables, one row a line, cells joined with " | ". Deleted tracked changes, field codes
and the VML fallback copies of text boxes are left out. A .docx has no fixed pages, so
sections carry no page number.

python-docx would add a dependency (and lxml) for less: it renders no numbering and skips
content controls and text boxes.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from bot.core.errors import IngestError
from retrieval.loading.document import (
    LoadedDocument,
    ParsedDocument,
    Section,
    loaded_document,
    prettify_stem,
    read_bytes,
)

# document.xml of a 500-page report is ~20 MB; more than this is a ZIP bomb or not a document.
MAX_PART_BYTES = 64 * 1024 * 1024

_OFFICE_DOCUMENT = re.compile(r"/officeDocument$")
_HEADING_NAME = re.compile(r"^(?:heading|tiêu đề|đầu đề)\s*([1-9])$")
_TITLE_NAMES = frozenset({"title", "tiêu đề"})


def load_docx(path: Path) -> LoadedDocument:
    """Read one .docx file, or raise `IngestError` naming the file and why it can't be used."""
    raw = read_bytes(path)
    parsed = read_docx(path, raw)
    if not parsed.sections:
        raise IngestError(f"{path.name}: no text found")
    return loaded_document(path, raw, parsed)


def read_docx(path: Path, raw: bytes) -> ParsedDocument:
    """Title and sections of the .docx bytes `raw`; `path` names the file in errors."""
    if raw.startswith(b"\xd0\xcf\x11\xe0"):
        # An OLE compound file: a password-protected .docx, or a Word 97-2003 .doc renamed.
        raise IngestError(f"{path.name}: encrypted DOCX or old .doc format (OLE file, not ZIP)")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            main = _main_part(archive, path)
            document = _parse(archive, main, path)
            if document is None:
                raise IngestError(f"{path.name}: not a DOCX (no {main} in the archive)")
            folder = main.rpartition("/")[0]
            styles = _parse(archive, f"{folder}/styles.xml" if folder else "styles.xml", path)
            numbering = _parse(
                archive, f"{folder}/numbering.xml" if folder else "numbering.xml", path
            )
            core = _parse(archive, "docProps/core.xml", path)
    except zipfile.BadZipFile as exc:
        raise IngestError(f"{path.name}: not a DOCX (corrupt or not a ZIP archive: {exc})") from exc
    reader = _BodyReader(_StyleLevels(styles), _Numbering(numbering))
    body = next((el for el in document if _local(el.tag) == "body"), None)
    if body is None:
        raise IngestError(f"{path.name}: not a DOCX (document part has no body)")
    reader.read(body)
    title = reader.title or _core_title(core) or prettify_stem(path.stem)
    return ParsedDocument(title, reader.sections, meta={"format": "docx"})


def _local(tag: str) -> str:
    # Transitional and Strict OOXML use different namespaces for the same local names.
    return tag.rpartition("}")[2]


def _attr(element: ElementTree.Element, name: str) -> str | None:
    for key, value in element.attrib.items():
        if _local(key) == name:
            return value
    return None


def _child(element: ElementTree.Element | None, name: str) -> ElementTree.Element | None:
    if element is None:
        return None
    return next((child for child in element if _local(child.tag) == name), None)


def _parse(archive: zipfile.ZipFile, name: str, path: Path) -> ElementTree.Element | None:
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > MAX_PART_BYTES:
        raise IngestError(f"{path.name}: {name} is too large ({info.file_size} bytes unpacked)")
    try:
        data = archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise IngestError(f"{path.name}: corrupt DOCX ({name}: {exc})") from exc
    if b"<!DOCTYPE" in data[:4096].upper():
        # OOXML parts never declare a DTD; refusing one rules out entity-expansion tricks.
        raise IngestError(f"{path.name}: {name} declares a DTD, which DOCX parts never do")
    try:
        # No DTD (checked above) means no entities to expand; ElementTree never fetches anything.
        return ElementTree.fromstring(data)  # noqa: S314
    except ElementTree.ParseError as exc:
        raise IngestError(f"{path.name}: corrupt DOCX ({name}: {exc})") from exc


def _main_part(archive: zipfile.ZipFile, path: Path) -> str:
    relationships = _parse(archive, "_rels/.rels", path)
    for relationship in relationships if relationships is not None else []:
        target = _attr(relationship, "Target") or ""
        if _OFFICE_DOCUMENT.search(_attr(relationship, "Type") or "") and target:
            return target.lstrip("/")
    return "word/document.xml"


def _core_title(core: ElementTree.Element | None) -> str:
    title = _child(core, "title")
    return " ".join((title.text or "").split()) if title is not None else ""


# --- styles and numbering ------------------------------------------------------------------------


class _StyleLevels:
    """Paragraph style id -> heading level (0 for Title), following `basedOn` for outline levels."""

    def __init__(self, styles: ElementTree.Element | None) -> None:
        self._styles: dict[str, ElementTree.Element] = {}
        for style in styles if styles is not None else []:
            if _local(style.tag) == "style" and _attr(style, "type") == "paragraph":
                self._styles[_attr(style, "styleId") or ""] = style
        self._cache: dict[str, int | None] = {}

    def level(self, style_id: str) -> int | None:
        if style_id not in self._cache:
            self._cache[style_id] = self._resolve(style_id, depth=0)
        return self._cache[style_id]

    def _resolve(self, style_id: str, depth: int) -> int | None:
        style = self._styles.get(style_id)
        name_element = _child(style, "name")
        name = _attr(name_element, "val") if name_element is not None else None
        for candidate in (name, style_id):
            folded = " ".join((candidate or "").casefold().split())
            if folded in _TITLE_NAMES:
                return 0
            match = _HEADING_NAME.match(folded) or re.fullmatch(r"heading([1-9])", folded)
            if match:
                return int(match.group(1))
        outline = _child(_child(style, "pPr"), "outlineLvl")
        if outline is not None and (value := _attr(outline, "val") or "").isdigit():
            return int(value) + 1 if int(value) < 9 else None
        based_on = _child(style, "basedOn")
        if based_on is not None and depth < 10:
            return self._resolve(_attr(based_on, "val") or "", depth + 1)
        return None


@dataclass(frozen=True)
class _Level:
    start: int
    format: str
    text: str


class _Numbering:
    """Renders auto-numbers ("Điều %1." -> "Điều 3.") in document order."""

    def __init__(self, numbering: ElementTree.Element | None) -> None:
        abstract: dict[str, dict[int, _Level]] = {}
        self._abstract_of: dict[str, str] = {}
        for element in numbering if numbering is not None else []:
            if _local(element.tag) == "abstractNum":
                levels: dict[int, _Level] = {}
                for level in element:
                    if _local(level.tag) != "lvl":
                        continue
                    start, fmt, text = (_child(level, n) for n in ("start", "numFmt", "lvlText"))
                    levels[int(_attr(level, "ilvl") or 0)] = _Level(
                        int(_attr(start, "val") or 1) if start is not None else 1,
                        (_attr(fmt, "val") or "decimal") if fmt is not None else "decimal",
                        (_attr(text, "val") or "") if text is not None else "",
                    )
                abstract[_attr(element, "abstractNumId") or ""] = levels
            elif _local(element.tag) == "num":
                reference = _child(element, "abstractNumId")
                if reference is not None:
                    self._abstract_of[_attr(element, "numId") or ""] = _attr(reference, "val") or ""
        self._levels = abstract
        self._counters: dict[str, dict[int, int]] = {}

    def label(self, num_id: str, ilvl: int) -> str:
        levels = self._levels.get(self._abstract_of.get(num_id, ""))
        if levels is None or ilvl not in levels:
            return ""
        # Counted per list instance: Word starts a new w:num where a list restarts at 1.
        counters = self._counters.setdefault(num_id, {})
        counters[ilvl] = counters[ilvl] + 1 if ilvl in counters else levels[ilvl].start
        for deeper in [level for level in counters if level > ilvl]:
            del counters[deeper]
        level = levels[ilvl]
        if level.format == "bullet":
            return "-"
        if level.format == "none":
            return ""

        def number(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            value = counters.get(index, levels[index].start if index in levels else 1)
            return _format_number(value, levels[index].format if index in levels else "decimal")

        return re.sub(r"%([1-9])", number, level.text).strip()


def _format_number(value: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letters = ""
        while value > 0:
            value, rest = divmod(value - 1, 26)
            letters = chr(ord("a") + rest) + letters
        return letters.upper() if fmt == "upperLetter" else letters
    if fmt in ("lowerRoman", "upperRoman"):
        roman = _roman(value)
        return roman.lower() if fmt == "lowerRoman" else roman
    return str(value)


def _roman(value: int) -> str:
    numerals = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC")]
    numerals += [(50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for amount, numeral in numerals:
        while value >= amount:
            out += numeral
            value -= amount
    return out


# --- body ----------------------------------------------------------------------------------------

# Deleted tracked changes, field codes, properties and VML copies of text boxes hold no body text.
_SKIPPED = frozenset({"del", "moveFrom", "pPr", "rPr", "instrText", "delText", "Fallback"})


class _BodyReader:
    def __init__(self, styles: _StyleLevels, numbering: _Numbering) -> None:
        self._styles = styles
        self._numbering = numbering
        self.title = ""
        self.sections: list[Section] = []
        self._stack: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._last_was_item = False

    def read(self, body: ElementTree.Element) -> None:
        for kind, element in _blocks(body):
            if kind == "tbl":
                self._table(element)
            else:
                self._paragraph(element)
        self._flush()

    def _paragraph(self, paragraph: ElementTree.Element) -> None:
        properties = _child(paragraph, "pPr")
        style = _child(properties, "pStyle")
        level = self._styles.level(_attr(style, "val") or "") if style is not None else None
        outline = _child(properties, "outlineLvl")
        if level is None and outline is not None and (_attr(outline, "val") or "").isdigit():
            level = int(_attr(outline, "val") or 0) + 1
        text = _clean(_paragraph_text(paragraph))
        label = self._number_label(properties)
        if label and text:
            text = f"{label} {text}"
        if not text:
            return
        if level == 0 and not self.title:
            self.title = " ".join(text.split())
            return
        if level is not None and 1 <= level <= 9:
            self._flush()
            while self._stack and self._stack[-1][0] >= level:
                self._stack.pop()
            self._stack.append((level, " ".join(text.split())))
            return
        # Paragraphs are blocks; consecutive items of one list stay a block of lines.
        if self._lines and not (label and self._last_was_item):
            self._lines.append("")
        self._lines.extend(text.split("\n"))
        self._last_was_item = bool(label)

    def _number_label(self, properties: ElementTree.Element | None) -> str:
        numbering = _child(properties, "numPr")
        num_id, ilvl = _child(numbering, "numId"), _child(numbering, "ilvl")
        if num_id is None:
            return ""
        level = _attr(ilvl, "val") if ilvl is not None else "0"
        return self._numbering.label(_attr(num_id, "val") or "", int(level or 0))

    def _table(self, table: ElementTree.Element) -> None:
        rows: list[list[str]] = []
        for row in (child for child in table if _local(child.tag) == "tr"):
            cells = [_cell_text(cell) for cell in row if _local(cell.tag) == "tc"]
            if any(cells):
                rows.append([cell.replace("|", "\\|") for cell in cells])
        if not rows:
            return
        if self._lines:
            self._lines.append("")
        self._last_was_item = False
        for index, cells in enumerate(rows):
            self._lines.append("| " + " | ".join(cells) + " |")
            if index == 0:
                self._lines.append("| " + " | ".join("---" for _ in cells) + " |")

    def _flush(self) -> None:
        text = "\n".join(line.rstrip() for line in self._lines).strip("\n")
        if text.strip():
            self.sections.append(Section(tuple(name for _, name in self._stack), text))
        self._lines.clear()
        self._last_was_item = False


def _blocks(container: ElementTree.Element) -> Iterator[tuple[str, ElementTree.Element]]:
    """Paragraphs and tables in reading order, looking inside content controls and custom XML."""
    for child in container:
        name = _local(child.tag)
        if name in ("p", "tbl"):
            yield name, child
        elif name in ("sdt", "sdtContent", "customXml", "ins", "moveTo"):
            yield from _blocks(child)


def _paragraph_text(element: ElementTree.Element) -> str:
    parts: list[str] = []
    for child in element:
        name = _local(child.tag)
        if name in _SKIPPED:
            continue
        if name == "t":
            parts.append(child.text or "")
        elif name == "tab":
            parts.append(" ")
        elif name in ("br", "cr"):
            parts.append("\n")
        elif name == "noBreakHyphen":
            parts.append("-")
        elif name == "p":  # a paragraph in a text box inside this one
            parts.append("\n" + _paragraph_text(child) + "\n")
        else:
            parts.append(_paragraph_text(child))
    return "".join(parts)


def _cell_text(cell: ElementTree.Element) -> str:
    merge = _child(_child(cell, "tcPr"), "vMerge")
    if merge is not None and _attr(merge, "val") in (None, "continue"):
        return ""  # the lower part of a vertically merged cell repeats nothing
    texts: list[str] = []
    for kind, element in _blocks(cell):
        if kind == "p":
            texts.append(_paragraph_text(element))
        else:
            rows = [
                " | ".join(_cell_text(c) for c in row if _local(c.tag) == "tc")
                for row in element
                if _local(row.tag) == "tr"
            ]
            texts.append("; ".join(rows))
    return " ".join(" ".join(texts).split())


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFC", text).replace("\xa0", " ")
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line)
