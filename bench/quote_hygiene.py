"""Defects of the quotes in a documents answer, counted by their shape (bench/answer_shape.py).

    from quote_hygiene import quote_defects
    quote_defects(body)   # Counter({"cut number": 1, "furniture": 2, ...})

These checks are the bench's own, written apart from the product's rules
(``bot/answer/units.py``, ``retrieval/text/furniture.py``) so that the figures do not merely
restate them. A quote is a body line "- text [n]"; the defects:

- **cut number**: a quote ending with a digit and "." whose next quote starts with three digits
  ("… 60. [1]" then "- 000 đ/hồ sơ"), a quote starting with "000", or a number spaced at its
  thousands dot inside a quote ("60. 000");
- **furniture**: a letterhead or agency line in capitals, the national motto, a document number
  ("Số: 12/TB-HV"), a place-and-date line, a page number, a breadcrumb or a share/read-more
  link;
- **mid-sentence**: a quote that starts with a lower-case letter (the end of a sentence whose
  start is elsewhere), or ends on a comma or a word that cannot end a Vietnamese sentence.
"""

from __future__ import annotations

import re
from collections import Counter

_QUOTE = re.compile(r"^- (.*) \[\d+\]$")
_ENDS_DIGIT_DOT = re.compile(r"\d\.$")
_STARTS_GROUP = re.compile(r"^\d{3}\b")
_SPACED_THOUSANDS = re.compile(r"\b\d{1,3}\. \d{3}\b")
_AGENCY = re.compile(r"^(?:BỘ|HỌC VIỆN|TRƯỜNG|ĐẠI HỌC|CỘNG HÒA|CỘNG HOÀ|UBND|ỦY BAN|SỞ)\b")
_MOTTO = re.compile(r"Độc lập\s*[-–]\s*Tự do\s*[-–]\s*Hạnh phúc", re.IGNORECASE)
_NUMBER_LINE = re.compile(r"^Số\s*:\s*\S+/\S+")
_PLACE_DATE = re.compile(r"^[^,.;:]{2,30},\s*ngày\b.{0,20}\btháng\b.{0,20}\bnăm\b.{0,12}$")
_PAGE = re.compile(r"^(?:Trang|Page)\s*\d+(?:\s*/\s*\d+)?$|^[-–]\s*\d+\s*[-–]$|^\d+$")
_NAVIGATION = re.compile(r"^(?:Trang chủ\s*[>»›/]|Chia sẻ\b|Xem thêm\b|Đọc thêm\b)", re.I)
# Words a Vietnamese sentence does not end on: a quote ending so was cut in the middle.
_DANGLING = frozenset(
    [
        "và",
        "của",
        "các",
        "cho",
        "với",
        "từ",
        "đến",
        "theo",
        "tại",
        "trong",
        "là",
        "được",
        "có",
        "những",
        "hoặc",
        "thì",
        "mà",
        "để",
        "về",
        "trên",
        "bằng",
    ]
)


def _quotes(body: str) -> list[str]:
    return [m.group(1) for line in body.splitlines() if (m := _QUOTE.match(line.strip()))]


def _capitals(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 6 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def _furniture(quote: str) -> bool:
    return bool(
        (_capitals(quote) and _AGENCY.match(quote))
        or _MOTTO.search(quote)
        or _NUMBER_LINE.match(quote)
        or _PLACE_DATE.match(quote)
        or _PAGE.match(quote)
        or _NAVIGATION.match(quote)
    )


def _mid_sentence(quote: str) -> bool:
    first = quote.lstrip('"“([').strip()[:1]
    if first.isalpha() and first.islower():
        return True
    last = quote.rstrip().rsplit(" ", 1)[-1].lower()
    return quote.rstrip().endswith(",") or last in _DANGLING


def quote_defects(body: str) -> Counter[str]:
    """How many quotes of ``body`` show each defect (a quote counts once per defect)."""
    found: Counter[str] = Counter()
    quotes = _quotes(body)
    for i, quote in enumerate(quotes):
        following = quotes[i + 1] if i + 1 < len(quotes) else ""
        if (
            (_ENDS_DIGIT_DOT.search(quote) and _STARTS_GROUP.match(following))
            or quote.startswith("000")
            or _SPACED_THOUSANDS.search(quote)
        ):
            found["cut number"] += 1
        if _furniture(quote):
            found["furniture"] += 1
        if _mid_sentence(quote):
            found["mid-sentence"] += 1
    return found


def quote_count(body: str) -> int:
    return len(_quotes(body))
