"""Sources on staff pages: a file's name, never where it lies on the server."""

from __future__ import annotations

import pytest

from admin.source_names import without_paths
from bot.core.citations import citation_label


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("No such file: '/srv/kb/de-an-2026.pdf'", "No such file: 'de-an-2026.pdf'"),
        (
            "cannot read /tmp/pytest-1/data/uploads/hoc-phi.docx: broken",
            "cannot read hoc-phi.docx: broken",
        ),
        ("C:\\kb\\tuyen-sinh.md is empty", "tuyen-sinh.md is empty"),
        ("~/kb/a.md", "a.md"),
        ("see https://shut.example.vn/a/b.pdf", "see https://shut.example.vn/a/b.pdf"),
        ("ngày 15/07/2026 và 1/2", "ngày 15/07/2026 và 1/2"),
    ],
)
def test_server_paths_in_text_become_file_names(text: str, shown: str) -> None:
    assert without_paths(text) == shown


def test_a_source_is_named_by_its_title_else_its_file_name() -> None:
    assert citation_label("Đề án tuyển sinh 2026", "/srv/kb/de-an.pdf") == "Đề án tuyển sinh 2026"
    assert citation_label("", "/srv/kb/de-an.pdf") == "de-an.pdf"
    assert citation_label("/srv/kb/de-an.pdf", "/srv/kb/de-an.pdf") == "de-an.pdf"
