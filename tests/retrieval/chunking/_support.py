"""What the structure chunker's tests build documents from."""

from __future__ import annotations

from retrieval.loading.document import LoadedDocument, Section


def document(*sections: Section, title: str = "Tài liệu") -> LoadedDocument:
    return LoadedDocument(
        source="test.md",
        title=title,
        url=None,
        language="vi",
        content_hash="0" * 64,
        sections=sections,
        meta={},
    )


def words(text: str) -> int:
    return len(text.split())


def table(rows: int, *, empty_first_row: bool = False) -> tuple[list[str], list[str]]:
    header = ["| STT | Mã ngành | Tên ngành | Điểm chuẩn |", "| --- | --- | --- | --- |"]
    if empty_first_row:
        header = [
            "|  |  |  |  |",
            "| --- | --- | --- | --- |",
            "| STT | Mã ngành | Tên ngành | Điểm |",
        ]
    body = [f"| {i} | 74801{i:02d} | Công nghệ thông tin {i} | 2{i % 10}.5 |" for i in range(rows)]
    return header, body


SENTENCES = [
    f"Câu số {i} nói rằng học phí là 40.000.000 đồng, điểm chuẩn 28.5 và hạn 15/6/2026."
    for i in range(60)
]
