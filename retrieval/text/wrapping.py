"""A page's lines as its author wrote them: lines broken by the layout joined back, and numbers
whose thousands dot the layout spaced or broke closed up again.

A PDF's text layer, and Tesseract's reading of a scan, give one line per printed line: a
sentence runs over two or three of them ("… xin thông báo về việc bố trí sinh viên khóa 2025 ở"
/ "nội trú tại các Ký túc xá …"), and an amount may be cut at its dot ("Lệ phí: 60." / "000
đ/hồ sơ"). Everything downstream takes a line for a unit: the chunker may end a chunk between
two lines, and the answerer quotes a line as it stands. `join_wrapped` joins a line to the one
before it when that one did not end its sentence and this one goes on with it:

- it continues a number cut at a thousands dot ("60." + "000 đ" → "60.000 đ");
- the line before ends with a full stop, "!", "?", "…", ":" or ";": never;
- either line is mostly capitals (a heading, a letterhead, a table header): never;
- the line is a list item ("- …", "1. …", "a) …"): never;
- it opens with a lower-case letter;
- the line before ends with a comma or a word a sentence does not end on (``dangling`` in
  ``retrieval/data/wrapping.yaml``: "và", "của", "từ", "ngày", …);
- the line before is full (as wide as the page's long lines) and this one opens with a capital
  or a digit, but is not a table row ("2 7480201 Công nghệ thông tin 200").

A blank line is a paragraph break and is kept, except inside a sentence: text layers and
Tesseract sometimes put one between two lines of a paragraph ("… điểm ưu tiên đối tượng và" / "" /
"ưu tiên khu vực …"). A line that did not end its sentence, followed by one that opens in lower
case (no paragraph does), is joined across it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from bot.core.errors import ConfigError
from retrieval.text.datafiles import DATA_DIR
from retrieval.text.folding import fold
from retrieval.text.sentences import LIST_ITEM
from retrieval.text.vocabulary import read_word_lists

# A number that a "." may have cut at its thousands ("60.", "1.050."), not "2025." or "28.5.".
_OPEN_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3})*\.$")
_GROUP_START = re.compile(r"^\d{3}(?![\d,])")
# "60. 000 đ": the space after the dot is the layout's; the lookahead checks what follows.
_SPACED = re.compile(r"(?<![\d.,])(\d{1,3}(?:\.\d{3})*)\. (?=(\d{3}(?:\.\d{3})*)(?![\d,])\s*(\S*))")
_ENDED = re.compile(r"[.!?…:;][\"'”’)\]]*$")
_BULLET = re.compile(r"^[•▪◦●○■□❖➢➤✓\uf0a7\uf0b7\uf076\uf0d8]")
# A row number and a code: "2 7480201 …", "2| 7320207 …" (OCR reads a table's rules as "|").
_ROW = re.compile(r"^\d{1,3}\s*\|?\s*\d")
_WORD = re.compile(r"[^\W\d_]+")
_FULL = 0.75  # of the page's wide lines: a line this long was wrapped by the layout
_MIN_LINES = 4  # a page with fewer lines of prose says nothing about its width
_CAPITALS = 0.6  # share of a line's letters


@dataclass(frozen=True)
class WrapWords:
    dangling: frozenset[str]
    currencies: frozenset[str]


@cache
def wrap_words() -> WrapWords:
    """The bundled ``retrieval/data/wrapping.yaml``, read and checked once."""
    path = DATA_DIR / "wrapping.yaml"
    lists = read_word_lists(path, ("dangling", "currencies"))
    for words in lists.values():
        for word in words:
            if not _WORD.fullmatch(word) or word != word.lower():
                raise ConfigError(f"{path}: {word!r} is not one lower-case word")
    return WrapWords(frozenset(lists["dangling"]), frozenset(fold(w) for w in lists["currencies"]))


def mostly_capitals(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 4 and sum(c.isupper() for c in letters) >= _CAPITALS * len(letters)


def continues_number(before: str, line: str) -> bool:
    """Whether ``line`` goes on with a number ``before`` ends with, cut at its thousands dot."""
    return bool(_OPEN_NUMBER.search(before.rstrip()) and _GROUP_START.match(line.lstrip()))


def soft_break(before: str, line: str) -> str | None:
    """What joins ``line`` to ``before`` when the break between them cannot end a sentence
    ("" for a number cut at its thousands dot, " " for a line opening in lower case after one
    that did not end its sentence), or None. The rules that hold for any text, a Markdown
    page's soft line breaks as much as a PDF's layout; `join_wrapped` adds those that need a
    page's layout (its width, the words a printed line does not end on)."""
    before, line = before.rstrip(), line.strip()
    if not before or not line or LIST_ITEM.match(line) or _BULLET.match(line):
        return None
    if continues_number(before, line):
        return ""
    if "|" in before or "|" in line:
        return None  # rows of a table OCR'd as text: a cell's second line is not prose
    if _unended(before) and not mostly_capitals(line) and _lower_start(line):
        return " "
    return None


def close_thousands(line: str, words: WrapWords | None = None) -> str:
    """``line`` with "60. 000 đ" read as "60.000 đ": a group of three digits after "NN. " closes
    up when it is "000", has a group after it, or is followed by a currency word."""
    currencies = (words or wrap_words()).currencies

    def closed(match: re.Match[str]) -> str:
        group, after = match.group(2), _WORD.match(match.group(3))
        amount = after is not None and fold(after.group()) in currencies
        if group.startswith("000") or "." in group or amount:
            return f"{match.group(1)}."
        return match.group(0)

    # "1. 050. 000 đồng": the last gap closes first ("050. 000" has "000"), then "1. 050.000".
    while (closed_up := _SPACED.sub(closed, line)) != line:
        line = closed_up
    return line


def join_wrapped(lines: Sequence[str], words: WrapWords | None = None) -> list[str]:
    """``lines`` (one page, blank lines between paragraphs) with each line the layout broke
    joined to the one before it (see the module's docstring for when)."""
    words = words or wrap_words()
    wide = _wide(lines)
    out: list[str] = []
    last = ""  # the last printed line of out[-1]: its width says whether the layout wrapped it
    for at, line in enumerate(lines):
        if not line.strip() and out and _unended(out[-1]):
            following = next((n for n in lines[at + 1 :] if n.strip()), "")
            if _lower_start(following) and not LIST_ITEM.match(following):
                continue  # a blank line OCR put inside a sentence
        glue = _glue(out[-1], last, line, wide, words) if out and out[-1] and line else None
        if glue is None:
            out.append(line)
        else:
            out[-1] = f"{out[-1]}{glue}{line.lstrip()}"
        last = line
    return out


def _glue(before: str, last: str, line: str, wide: int, words: WrapWords) -> str | None:
    """What joins ``line`` to ``before`` ("" or " "), or None when it starts a line of its own."""
    before, line = before.rstrip(), line.strip()
    if LIST_ITEM.match(line) or _BULLET.match(line):
        return None
    if continues_number(before, line):
        return ""
    if _ENDED.search(before) or mostly_capitals(before) or mostly_capitals(line):
        return None
    if _lower_start(line) or _open(before, words):
        return " "
    first = line.lstrip("\"'“‘([")[:1]
    if "|" in line or "|" in last or _ROW.match(line):
        return None  # rows of a table OCR'd as text
    if wide and len(last.strip()) >= _FULL * wide and first.isalnum():
        return " "
    return None


def _unended(line: str) -> bool:
    line = line.rstrip()
    return bool(line) and not _ENDED.search(line) and not mostly_capitals(line)


def _lower_start(line: str) -> bool:
    first = line.strip().lstrip("\"'“‘([")[:1]
    return first.isalpha() and first.islower()


def _open(before: str, words: WrapWords) -> bool:
    """Whether ``before`` ends on a comma or a word a sentence does not end on."""
    before = before.rstrip()
    final = _WORD.findall(before.lower())
    return before.endswith(",") or bool(
        final and final[-1] in words.dangling and before[-1:].isalpha()
    )


def _wide(lines: Sequence[str]) -> int:
    """How wide the page's long lines are (characters), or 0 when it has too few to tell."""
    widths = sorted(len(line.strip()) for line in lines if len(line.split()) >= 3)
    if len(widths) < _MIN_LINES:
        return 0
    return widths[int(0.9 * (len(widths) - 1))]
