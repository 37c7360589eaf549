"""What a document's sentences say about its tables: the scale each method's scores are given
on ("thang 1.200"), and when a year's cut-offs are published."""

from __future__ import annotations

import re

from retrieval.facts.cells import read_number
from retrieval.facts.columns import method_of
from retrieval.facts.tables import split_row
from retrieval.guard.checks import NearMissGuard
from retrieval.loading.document import LoadedDocument
from retrieval.text.folding import fold

_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_CUTOFF_WORDS = re.compile(r"\b(?:diem chuan|diem trung tuyen)\b")
_PUBLISHED = re.compile(r"\b(?:cong bo|thong bao)\b")
# "thang 30", "thang điểm 30", "thang 1.200": the scale a method's scores are given on.
_SCALE = re.compile(r"\bthang(?: diem)? (\d{1,3}(?:[.,]\d{3})?|\d+)\b")


def publications(doc: LoadedDocument) -> dict[int, str]:
    """The document's sentences saying when a year's cut-offs are published."""
    found: dict[int, str] = {}
    for section in doc.sections:
        for piece in re.split(r"(?<=[.!?])\s+|\n", section.text):
            # a schedule's row reads "what: when"
            sentence = (
                ": ".join(c for c in split_row(piece) if c) if piece.startswith("|") else piece
            )
            folded = fold(sentence)
            if _CUTOFF_WORDS.search(folded) and _PUBLISHED.search(folded):
                for year in sorted({int(y) for y in _YEAR.findall(sentence)}, reverse=True):
                    found.setdefault(year, " ".join(sentence.split()).strip("*_ "))
                    break
    return found


def method_scales(doc: LoadedDocument, guard: NearMissGuard) -> dict[str | None, float]:
    """The scale each method's scores are given on, where the document says so in one sentence
    or line ("ĐGNL: … thang 1.200"); ``None`` for a scale said with no method."""
    scales: dict[str | None, float] = {}
    for section in doc.sections:
        for line in re.split(r"(?<=[.;])\s+|\n", section.text):
            folded = fold(line)
            match = _SCALE.search(folded)
            if match is None:
                continue
            scale = read_number(match.group(1), "count")
            if scale is None:
                continue
            method = method_of(guard.facets(line).get("method"), folded)
            scales.setdefault(method, scale)
    return scales
