"""How a reply names its sources (bot.core.citations): by title and web address, never by the
server's path of a file; the lines it writes are the ones the channels read back."""

from __future__ import annotations

import pytest

from bot.core.citations import (
    Citation,
    citation_line,
    public_citation,
    shown_name,
    source_links,
)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("/srv/tuvan/uploads/quy-che-2026.pdf", "quy-che-2026.pdf"),
        ("/home/tuvan/.local/share/tuvan/uploads/hoc bong.docx", "hoc bong.docx"),
        ("~/kb/hoc-phi.md", "hoc-phi.md"),
        ("C:\\kb\\tuyen-sinh\\hoc-phi.md", "hoc-phi.md"),
        ("./kb/a.md", "a.md"),
        ("kb/nganh/hoc-phi.md", "hoc-phi.md"),
        ("https://tuyensinh.shut.example.vn/hoc-phi", "https://tuyensinh.shut.example.vn/hoc-phi"),
        ("Học phí năm học 2025/2026", "Học phí năm học 2025/2026"),  # a title, not a path
        ("2025/2026", "2025/2026"),
        ("Quy chế tuyển sinh", "Quy chế tuyển sinh"),
        ("", ""),
    ],
)
def test_a_file_path_shows_as_its_file_name(text: str, shown: str) -> None:
    assert shown_name(text) == shown


def test_an_uploaded_file_is_cited_by_its_title_without_its_path() -> None:
    upload = Citation(2, "Quy chế học bổng", "/srv/tuvan/uploads/hoc-bong.pdf", None, 3)
    assert citation_line(upload, "vi") == "[2] Quy chế học bổng, trang 3"
    assert citation_line(upload, "en") == "[2] Quy chế học bổng, page 3"
    untitled = Citation(1, "", "/srv/tuvan/uploads/hoc-bong.pdf", None, None)
    assert citation_line(untitled, "vi") == "[1] hoc-bong.pdf"
    # An FAQ entry drafted from an untitled file carries the path as its title.
    path_title = Citation(1, "/srv/kb/ktx.md", "/srv/kb/ktx.md", None, None)
    assert citation_line(path_title, "vi") == "[1] ktx.md"
    assert public_citation(path_title) == {"n": 1, "title": "ktx.md", "url": None, "page": None}


def test_a_crawled_page_is_cited_by_its_url_and_read_back_as_a_link() -> None:
    page = Citation(1, "Học phí 2026", "https://x.vn/hoc-phi", "https://x.vn/hoc-phi", None)
    line = citation_line(page, "vi")
    assert line == "[1] Học phí 2026 — https://x.vn/hoc-phi"
    body, block = source_links(f"Học phí là 32 triệu.\n\nNguồn:\n{line}")
    assert body == "Học phí là 32 triệu."
    assert block is not None
    assert [(s.n, s.title, s.url) for s in block.links] == [(1, "Học phí 2026", page.url)]


def test_a_public_citation_has_no_source_and_no_address_but_a_web_one() -> None:
    stored = {
        "n": 1,
        "title": "Nội quy",
        "source": "/srv/kb/noi-quy.md",
        "url": "file:///srv/kb/noi-quy.md",
        "page": 2,
    }
    assert public_citation(stored) == {"n": 1, "title": "Nội quy", "url": None, "page": 2}
    web = {"n": 3, "title": "", "source": "https://x.vn/a", "url": "https://x.vn/a", "page": None}
    shown = {"n": 3, "title": "https://x.vn/a", "url": "https://x.vn/a", "page": None}
    assert public_citation(web) == shown


def test_a_citation_names_its_document_s_year_unless_its_title_does() -> None:
    notice = Citation(1, "Thông báo ký túc xá", "/kb/ktx.md", None, 2, year=2025)
    assert citation_line(notice, "vi") == "[1] Thông báo ký túc xá (năm 2025), trang 2"
    assert citation_line(notice, "en") == "[1] Thông báo ký túc xá (2025), page 2"
    titled = Citation(1, "Học phí 2025", "/kb/hp.md", None, None, year=2025)
    assert citation_line(titled, "vi") == "[1] Học phí 2025"
    page = Citation(1, "Ký túc xá", "https://x.vn/ktx", "https://x.vn/ktx", None, year=2025)
    line = citation_line(page, "vi")
    assert line == "[1] Ký túc xá (năm 2025) — https://x.vn/ktx"
    _, block = source_links(f"Ký túc xá mở đăng ký từ 1/8.\n\nNguồn:\n{line}")
    assert block is not None
    assert [(s.title, s.url) for s in block.links] == [("Ký túc xá (năm 2025)", page.url)]
