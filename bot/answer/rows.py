"""How a table row reads, as a unit of a passage: "header: cell; …" for scoring, and quoted as
a short line that says what the row is about first ("Kỹ thuật Phần mềm (7480103): chỉ tiêu 2026
là 200; tổ hợp xét tuyển: A00, A01")."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from retrieval.text.folding import fold

MAX_SENTENCE_CHARS = 600
NAME_HEADER = re.compile(
    r"\b(?:nganh|ten|chuong trinh|bo phan|kenh|doi tuong|phuong thuc|hang muc|khoan|loai|"
    r"programme|program|major|name|item)\b"
)
CODE_HEADER = re.compile(r"^(?:ma|code)\b")


def cut(text: str) -> str:
    if len(text) <= MAX_SENTENCE_CHARS:
        return text
    return text[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"


def row_text(cells: Sequence[tuple[str, str]]) -> str:
    """A row as read for scoring, and quoted when nothing is asked of it: "header: cell; …"."""
    return cut("; ".join(f"{h}: {c}" if h else c for h, c in cells))


def render_row(cells: Sequence[tuple[str, str]], asked: Callable[[str, str], bool]) -> str:
    """A row as a short line, what it is about first, then the columns asked, then the rest:
    "Kỹ thuật Phần mềm (7480103): chỉ tiêu 2026 là 200; tổ hợp xét tuyển: A00, A01"."""
    if not any(h for h, _ in cells):
        return row_text(cells)
    name = next((i for i, (h, c) in enumerate(cells) if NAME_HEADER.search(fold(h))), 0)
    code = next(
        (
            i
            for i, (h, c) in enumerate(cells)
            if i != name and CODE_HEADER.match(fold(h)) and len(c) <= 20
        ),
        None,
    )
    head = cells[name][1] + (f" ({cells[code][1]})" if code is not None else "")
    rest = [(h, c) for i, (h, c) in enumerate(cells) if i not in (name, code)]
    if not rest:
        return cut(f"{cells[name][0]}: {head}" if cells[name][0] else head)
    first = [(h, c) for h, c in rest if asked(h, c)]
    said = [
        f"{_lower(h)} {'là' if _vietnamese(h) else ':'} {c}".replace(" :", ":") for h, c in first
    ]
    said += [f"{_lower(h)}: {c}" if h else c for h, c in rest if (h, c) not in first]
    return cut(f"{head}: {'; '.join(said)}")


def _lower(header: str) -> str:
    """ "Chỉ tiêu 2026" → "chỉ tiêu 2026"; an acronym ("ĐGNL", "IELTS") stays."""
    if len(header) > 1 and header[1].islower():
        return header[0].lower() + header[1:]
    return header


def _vietnamese(text: str) -> bool:
    return fold(text) != text.lower()
