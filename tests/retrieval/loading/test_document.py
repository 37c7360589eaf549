"""What every loader shares: the document's language."""

from __future__ import annotations

import pytest

from retrieval.loading.document import document_language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Điểm chuẩn năm nay", "vi"),
        ("Cut-off scores for the Đại học Bách khoa " + "admission " * 100, "en"),
        ("", "en"),
    ],
)
def test_language_guess(text: str, language: str) -> None:
    assert document_language(text) == language
