"""A page's furniture: the lines around its text that are never an answer to quote.

They may stay in a chunk's text (they cost search little), but the answerer must not quote them
(bot.answer.units drops them from the units it may quote). Told by their shape, with the words in
``retrieval/data/furniture.yaml``:

- a **letterhead**: the national title and motto ("CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM", "Độc lập
  - Tự do - Hạnh phúc"), the document's number ("Số: 359/TB-HV") and its place and date ("Hà
  Nội, ngày 28 tháng 5 năm 2025"), and the lines in capitals around them (the agency's name:
  "BỘ KHOA HỌC VÀ CÔNG NGHỆ", "HỌC VIỆN CÔNG NGHỆ", "BƯU CHÍNH VIỄN THÔNG"), up to the document's
  type ("THÔNG BÁO"), a blank line or a line of prose;
- the **addressing and signature**: "Kính gửi: …", "Nơi nhận:" and the items under it, "KT. GIÁM
  ĐỐC", "(Đã ký)";
- the **legal basis** of a notice: "Căn cứ Thông báo số 361/TB-HV ngày…", "Căn cứ Luật…" (not
  "Căn cứ vào điểm thi, …", which says how something is decided);
- a **page number**: "Trang 3/10", "- 3 -", "Page 3 of 10";
- a web page's **navigation**: "Chia sẻ:", "Xem thêm", a breadcrumb ("Trang chủ > Tuyển sinh"),
  a copyright line, a menu (three list items or more in a row that are each a short link), and a
  post's byline: a few short list items, one of them a bare date ("Chương trình học bổng" /
  "27/06/2025" / "admintuyensinh"), that no line ending with ":" introduces.

An all-capitals heading alone ("BỘ MÔN TRÍ TUỆ NHÂN TẠO", "II. CHỈ TIÊU TUYỂN SINH") is not
furniture: only the capitals next to a letterhead's own lines are. A PDF's running headers are the
loader's to drop (retrieval.loading.page_furniture): only it sees every page of a document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from retrieval.text.datafiles import DATA_DIR
from retrieval.text.folding import fold
from retrieval.text.vocabulary import read_word_lists
from retrieval.text.wrapping import mostly_capitals

WORD_LISTS = (
    "mottos",
    "document_types",
    "legal_basis",
    "legal_documents",
    "addressing",
    "signatures",
    "navigation",
)
# Matched on folded text ("Số: 359/TB-HV" → "so: 359/tb-hv"). The number's column may be printed
# on the date's line, and OCR misreads them ("$6:364/TB-HV", "ngàyÁÖ tháng † năm 2025").
_NUMBER = re.compile(r"^(?:so\s*:?\s*)?\S{0,10}/\s*[a-z]{1,6}(?:[-–][a-z]{1,8})+$")
_NUMBER_TOKENS = 3  # at most this many tokens of a number before a place and date on one line
# "Hà Nội, ngày 28 tháng 5 năm 2025", "TP. Hồ Chí Minh, ngày … tháng … năm …", "Hà Nội, 07/2025":
# a place of five words at most, without digits, then the date and nothing else.
_PLACE_DATE = re.compile(
    r"^(?:[^\d\s,;:]+\s?){1,5},\s*"
    r"(?:(?:ngay[^,;:]{0,12})?thang[^,;:]{0,12}nam[^,;:]{0,12}|\d{1,2}/\d{4})$"
)
# "- 3 -" reads "3 -" once its dash is taken for a list marker.
_PAGE = re.compile(
    r"^(?:trang|page)\s*\d{1,4}(?:\s*(?:/|of|tren)\s*\d{1,4})?$|^(?:[-–—]\s*)?\d{1,4}\s*[-–—]$"
)
# Not "©" alone: OCR reads a bullet as "©" ("© Cơ sở Phía Bắc (BVH): 14.40 điểm").
_COPYRIGHT = re.compile(r"^(?:(?:©|\(c\))\s*(?:copyright|\d{4})|copyright\b|ban quyen\b)")
_PUNCTUATION = re.compile(r"[\W_]+")
_BREADCRUMB = re.compile(r"\s[>»›]\s")
_SIGNER = re.compile(r"^(?:(?:kt|tm|tl|q|tuq)\s*\.\s*)+")
_ENUMERATED = re.compile(r"^(?:[ivxlc]+|\d{1,2}|[a-z])[./)]\s")  # "II. CHỈ TIÊU", "a) …"
# A letterhead's line (two columns printed as one), a signature or a navigation line is shorter.
_LETTERHEAD_CHARS = 120
_DATE = re.compile(r"^\d{1,2}/\d{1,2}/\d{4}$")
_BYLINE_ITEMS = (2, 4)  # a byline's items: category, date, author
_MENU_RUN = 3  # link items in a row that make a menu
_MENU_WORDS = 8  # at most this many words in each
_SHORT_TAIL = 4  # words after "Chia sẻ:" ("Facebook Zalo Twitter")


@dataclass(frozen=True)
class PageLine:
    """A line of a passage as the furniture rules read it: its text without Markdown ("" for a
    blank line), whether it is a list item, and whether it is a list item made of one link."""

    text: str
    item: bool = False
    link: bool = False


@dataclass(frozen=True)
class FurnitureWords:
    """The phrases of ``retrieval/data/furniture.yaml``, folded."""

    mottos: tuple[str, ...]
    document_types: tuple[str, ...]
    legal_basis: tuple[str, ...]
    legal_documents: tuple[str, ...]
    addressing: tuple[str, ...]
    signatures: tuple[str, ...]
    navigation: tuple[str, ...]


@cache
def furniture_words() -> FurnitureWords:
    """The bundled word lists, read and checked once."""
    lists = read_word_lists(DATA_DIR / "furniture.yaml", WORD_LISTS)
    phrases = {k: tuple(dict.fromkeys(fold(p) for p in lists[k])) for k in WORD_LISTS}
    # The motto is matched without its punctuation, which OCR drops or changes.
    phrases["mottos"] = tuple(
        dict.fromkeys(_PUNCTUATION.sub(" ", m).strip() for m in phrases["mottos"])
    )
    return FurnitureWords(**phrases)


def furniture(lines: Sequence[PageLine], words: FurnitureWords | None = None) -> set[int]:
    """The positions of the lines of ``lines`` that are furniture (see the module docstring)."""
    words = words or furniture_words()
    # A paragraph is no letterhead, signature or navigation line (a copyright notice, or the
    # addressee, may be long): only its opening is folded, the costliest step.
    folded = [fold(x.text[:_LETTERHEAD_CHARS]).strip() for x in lines]
    short = [len(x.text) <= _LETTERHEAD_CHARS for x in lines]
    found: set[int] = set()
    anchors = [
        i
        for i, (line, f) in enumerate(zip(lines, folded, strict=True))
        if f and short[i] and _letterhead_line(line.text, f, words)
    ]
    for i in anchors:
        found.add(i)
        found.update(_around(lines, folded, short, i, words))
    for i, (line, f) in enumerate(zip(lines, folded, strict=True)):
        if not f:
            continue
        if _COPYRIGHT.match(f) or (
            short[i]
            and (_signature(line.text, f, words) or _navigation(f, words) or _PAGE.match(f))
        ):
            found.add(i)
        if _addressing(f, words):
            found.add(i)
            found.update(_items_after(lines, i))
        elif _legal_basis(f, words):
            found.add(i)
    found.update(_menus(lines))
    found.update(_bylines(lines))
    return found


def _starts(folded: str, phrases: Sequence[str]) -> str | None:
    return next((p for p in phrases if folded == p or folded.startswith(f"{p} ")), None)


def _letterhead_line(text: str, folded: str, words: FurnitureWords) -> bool:
    """The national title or motto, the document's number, or its place and date (with the
    number before them when the layout printed both on one line)."""
    if _motto(text, folded, words) or _NUMBER.match(folded):
        return True
    if "," not in folded:
        return False
    if _PLACE_DATE.match(folded):
        return True
    tokens = folded.split()
    return any(
        _PLACE_DATE.match(" ".join(tokens[k:]))
        and any(c.isdigit() or c == "/" for c in "".join(tokens[:k]))
        for k in range(1, min(_NUMBER_TOKENS, len(tokens) - 1) + 1)
    )


def _motto(text: str, folded: str, words: FurnitureWords) -> bool:
    """The national title or motto, alone on its line or beside the agency's name in capitals
    (two columns printed as one): not inside a sentence ("… rời khỏi lãnh thổ nước Cộng hòa
    xã hội chủ nghĩa Việt Nam.")."""
    if text.rstrip().endswith((".", ",", ";", ":")):
        return False
    # OCR drops or changes the motto's dashes ("Độc lập Tự do Hạnh phúc", "Độc lập — Tự do").
    bare = _PUNCTUATION.sub(" ", folded).split()
    said = _PUNCTUATION.sub(" ", text).split()
    if len(bare) != len(said):
        return False
    for motto in words.mottos:
        size = len(motto.split())
        at = next((i for i in range(len(bare)) if " ".join(bare[i : i + size]) == motto), None)
        if at is not None:
            rest = " ".join(said[:at] + said[at + size :])
            return not rest or mostly_capitals(rest)
    return False


def _around(
    lines: Sequence[PageLine], folded: list[str], short: list[bool], at: int, words: FurnitureWords
) -> set[int]:
    """The capital lines next to a letterhead line (the agency's name), both ways, up to a blank
    line, the document's type, a numbered heading or a line of prose; before the letterhead's
    first line, blank lines are crossed (OCR puts the agency's block apart from the motto's)."""
    found: set[int] = set()
    for step in (-1, 1):
        i = at + step
        while 0 <= i < len(lines):
            f = folded[i]
            if not f:
                if step == 1:
                    break
                i += step
                continue
            if not short[i]:
                break  # a paragraph
            if _letterhead_line(lines[i].text, f, words) or (
                mostly_capitals(lines[i].text)
                and not _starts(f, words.document_types)
                and not _ENUMERATED.match(f)
                and not f.endswith(":")
            ):
                found.add(i)
            else:
                break
            i += step
    return found


def _signature(text: str, folded: str, words: FurnitureWords) -> bool:
    """ "KT. GIÁM ĐỐC", "PHÓ HIỆU TRƯỞNG", "(Đã ký)": a signer's role in capitals or brackets."""
    bare = _SIGNER.sub("", folded.strip("()[] "))
    if not _starts(bare, words.signatures):
        return False
    return mostly_capitals(text) or text.strip().startswith("(")


def _navigation(folded: str, words: FurnitureWords) -> bool:
    bare = folded.rstrip(" :.")
    if bare in words.navigation:
        return True
    for phrase in words.navigation:
        if not bare.startswith(phrase):
            continue
        if bare.startswith(f"{phrase}:") or bare.startswith(f"{phrase} :"):
            return len(bare[len(phrase) :].lstrip(" :").split()) <= _SHORT_TAIL
        if _BREADCRUMB.match(bare, len(phrase)):
            return True  # "Trang chủ > Tuyển sinh > …"
    return False


def _addressing(folded: str, words: FurnitureWords) -> bool:
    return any(folded.startswith(f"{p}:") or folded.startswith(f"{p} :") for p in words.addressing)


def _legal_basis(folded: str, words: FurnitureWords) -> bool:
    """A line citing what the notice rests on: "Căn cứ", then a law or a numbered document."""
    for opening in words.legal_basis:
        if folded.startswith(f"{opening} "):
            rest = folded[len(opening) + 1 :]
            numbered = tuple(f"{kind} so" for kind in words.document_types)
            if _starts(rest, (*words.legal_documents, *numbered)):
                return True
    return False


def _items_after(lines: Sequence[PageLine], at: int) -> set[int]:
    """The list items under "Nơi nhận:" (blank lines between them crossed)."""
    found: set[int] = set()
    for i in range(at + 1, len(lines)):
        if not lines[i].text:
            continue
        if not lines[i].item:
            break
        found.add(i)
    return found


def _menus(lines: Sequence[PageLine]) -> set[int]:
    """Runs of at least ``_MENU_RUN`` short link items (blank lines between them crossed)."""
    found: set[int] = set()
    run: list[int] = []
    for i, line in enumerate([*lines, PageLine("end")]):
        if not line.text:
            continue
        if line.link and len(line.text.split()) <= _MENU_WORDS and not line.text.endswith("."):
            run.append(i)
            continue
        if len(run) >= _MENU_RUN:
            found.update(run)
        run = []
    return found


def _bylines(lines: Sequence[PageLine]) -> set[int]:
    """Runs of 2 to 4 short list items, one of them a bare date and not all dates, that no line
    ending with ":" introduces (a schedule's dates are)."""
    found: set[int] = set()
    run: list[int] = []
    for i, line in enumerate([*lines, PageLine("")]):
        short = line.item and len(line.text.split()) <= _MENU_WORDS and line.text[-1:] not in ".:;"
        if short:
            run.append(i)
            continue
        dates = sum(bool(_DATE.match(lines[j].text)) for j in run)
        before = lines[run[0] - 1].text if run and run[0] > 0 else ""
        low, high = _BYLINE_ITEMS
        if low <= len(run) <= high and dates == 1 and not before.endswith(":"):
            found.update(run)
        run = []
    return found
