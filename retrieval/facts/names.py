"""A row's major and programme from its name cell: "Khoa học Máy tính – chất lượng cao",
"Hệ thống thông tin (CT tiên tiến)", "Khoa học Máy tính (KHMT)" (an alias), and a programme
as staff would write it."""

from __future__ import annotations

import re

from retrieval.facts.context import TableContext
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack

_WORDS = load_pack().facts
_SKIPPED_IN_INITIALS = frozenset({"va", "and", "of"})
_QUALIFIED = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<qualifier>[^()]+)\)?\s*$")
# Words that only say "a programme" before its name ("CT tiên tiến", "hệ chất lượng cao").
_PROGRAMME_WORDS = re.compile(r"^(?:chuong trinh|ct|he|huong|dinh huong) ")
_DASHED = re.compile(r"^(?P<name>.+?)\s+[–—-]\s+(?P<qualifier>.+)$")


def row_programme(cell: str, guard: NearMissGuard) -> str | None:
    """The programme a row's name cell names: "Chuẩn – nhóm 1" is the standard one (None),
    "Chất lượng cao" the high-quality one, anything else as written."""
    head = re.split(r"\s+[–—-]\s+|\s*\(", cell.strip())[0]
    if fold(head) in _WORDS.standard_programme:
        return None
    return _programme(head, guard) or (_tidy(head) if head else None)


def major_and_programme(
    name: str, code: str | None, context: TableContext, guard: NearMissGuard
) -> tuple[str, str | None, str | None]:
    """A row's major and programme: "Khoa học Máy tính – chất lượng cao" is the major Khoa học
    Máy tính in the high-quality programme, "Hệ thống thông tin (CT tiên tiến)" the advanced
    one; a programme the row does not name is the table's (its headings), else the standard one
    (None). A dash splits the name only before a programme's name ("Tài chính - Ngân hàng" is
    one major). A bracket holding the name's initials ("Khoa học Máy tính (KHMT)") is an alias,
    the third thing returned."""
    name = " ".join(name.replace("**", "").split())
    programme: str | None = None
    alias: str | None = None
    qualified = _QUALIFIED.match(name)
    if qualified:
        name, qualifier = qualified["name"].strip(), qualified["qualifier"].strip()
        if fold(qualifier).replace(" ", "") == initials(name):
            alias = qualifier
        else:
            programme = _programme(qualifier, guard) or _tidy(qualifier)
    else:
        dashed = _DASHED.match(name)
        if dashed:
            found = _programme(dashed["qualifier"], guard)
            if found is not None:
                name, programme = dashed["name"].strip(), found
    if programme is None and code:
        programme = _programme(code, guard)
    if programme is None and not context.standard():
        table_programmes = context.first("programme")
        if table_programmes and len(table_programmes) == 1:
            programme = next(iter(table_programmes))
    if programme is not None and fold(programme) in _WORDS.standard_programme:
        programme = None
    return name, programme, alias


def initials(name: str) -> str:
    """ "khmt" for "Khoa học Máy tính", "mmttt" for "Mạng máy tính và truyền thông" ("và",
    "and", "of" skipped); "" for a one-word name."""
    words = [w for w in fold(name).split() if w not in _SKIPPED_IN_INITIALS]
    return "".join(w[0] for w in words if w[0].isalpha()) if len(words) >= 2 else ""


def _programme(text: str, guard: NearMissGuard) -> str | None:
    """The programme ``text`` names, as the guard calls it, when it names no more than that
    ("CT tiên tiến", "CLC"); "Chất lượng cao định hướng Nhật Bản" is a programme of its own."""
    folded = fold(text)
    if folded in _WORDS.standard_programme:
        return folded
    found = guard.facets(text).get("programme")
    if not found or len(found) != 1:
        return None
    programme = next(iter(found))
    words = _PROGRAMME_WORDS.sub("", folded).split()
    return programme if len(words) <= len(fold(programme).split()) or len(words) == 1 else None


def _tidy(text: str) -> str:
    """A qualifier as staff would write it: "CHẤT LƯỢNG CAO ĐỊNH HƯỚNG NHẬT BẢN" in lower case
    with its first letter kept."""
    text = " ".join(text.split())
    if text.isupper():
        text = text[:1] + text[1:].lower()
    return text
