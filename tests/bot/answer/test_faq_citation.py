"""How a tier-1 answer names its source (bot.answer.faq_citation), from one table of cases: an
ingested document by its title and address, a web address linked, a title shown, and never a
file's name."""

from __future__ import annotations

import pytest

from bot.answer.faq_citation import faq_citation
from bot.core.citations import Citation, names_file, public_citation
from retrieval.faq.sources import SourceDocument

FEES = SourceDocument(
    "Học phí năm học 2026–2027", "/srv/kb/hoc-phi-2026.md", "https://ts.example.vn/hoc-phi"
)
UNTITLED = SourceDocument("", "/srv/kb/scan.pdf", "https://ts.example.vn/scan.pdf")
UNTITLED_FILE = SourceDocument("/srv/kb/scan.pdf", "/srv/kb/scan.pdf", None)
STAFF_URL = "https://ts.example.vn/thong-bao"

# (source, source_url, document) → (title, url) a student sees, or None for no citation.
CASES: list[tuple[str | None, str | None, SourceDocument | None, tuple[str, str | None] | None]] = [
    ("hoc-phi-2026.md", None, FEES, ("Học phí năm học 2026–2027", FEES.url)),
    ("hoc-phi-2026.md", STAFF_URL, FEES, ("Học phí năm học 2026–2027", STAFF_URL)),
    ("Học phí", None, FEES, ("Học phí năm học 2026–2027", FEES.url)),
    ("scan.pdf", None, UNTITLED, (UNTITLED.url, UNTITLED.url)),
    ("scan.pdf", None, UNTITLED_FILE, None),
    ("https://ts.example.vn/ktx", None, None, ("https://ts.example.vn/ktx", "https://ts.example.vn/ktx")),
    ("Phòng Tuyển sinh", None, None, ("Phòng Tuyển sinh", None)),
    ("Đề án tuyển sinh 2026", STAFF_URL, None, ("Đề án tuyển sinh 2026", STAFF_URL)),
    ("hoc-phi-2026.md", None, None, None),
    ("kb/hoc-phi-2026.md", None, None, None),
    ("/srv/kb/hoc-phi-2026.md", None, None, None),
    ("hoc-phi-2026.md", STAFF_URL, None, (STAFF_URL, STAFF_URL)),
    (None, STAFF_URL, None, (STAFF_URL, STAFF_URL)),
    ("hoc-phi-2026.md", "file:///srv/kb/hoc-phi-2026.md", None, None),
    (None, None, None, None),
    ("  ", None, None, None),
]  # fmt: skip


@pytest.mark.parametrize(("source", "source_url", "document", "shown"), CASES)
def test_an_faq_answer_cites_what_a_student_can_read_and_open(
    source: str | None,
    source_url: str | None,
    document: SourceDocument | None,
    shown: tuple[str, str | None] | None,
) -> None:
    cited = faq_citation(source, source_url, document)
    if shown is None:
        assert cited is None
        return
    assert cited is not None
    public = public_citation(cited)
    assert (public["title"], public["url"]) == shown
    assert not names_file(public["title"])


def test_a_cited_document_keeps_its_path_for_staff_pages() -> None:
    cited = faq_citation("hoc-phi-2026.md", None, FEES)
    assert cited == Citation(1, FEES.title, FEES.source, FEES.url, None)


@pytest.mark.parametrize(
    ("text", "is_file"),
    [
        ("hoc-phi-2026.md", True),
        ("De an 2026.PDF", True),
        ("kb/a.docx", True),
        ("/srv/kb/a", True),
        ("C:\\kb\\a.xlsx", True),
        ("Học phí năm học 2026–2027", False),
        ("Thông báo số 12/2026", False),
        ("https://ts.example.vn/a.pdf", False),
        ("Quy chế v2.0", False),
        ("", False),
    ],
)
def test_names_file_tells_a_file_from_a_title(text: str, is_file: bool) -> None:
    assert names_file(text) is is_file
