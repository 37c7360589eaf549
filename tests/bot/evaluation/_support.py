"""What the questions evaluation tests share: passages, questions about them, a JSONL writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PASSAGES = [
    {
        "chunk_id": "p1",
        "source": "hoc-phi.pdf",
        "page": 2,
        "title": "Học phí",
        "text": "Học phí năm học 2026-2027 của chương trình chuẩn là 32.000.000 đồng mỗi năm.",
    },
    {
        "chunk_id": "p2",
        "source": "hoc-phi.pdf",
        "page": 3,
        "title": "Học phí",
        "text": "Sinh viên đóng học phí theo học kỳ, hạn chót là ngày 15/10 hằng năm.",
    },
    {
        "id": "p3",
        "source": "ky-tuc-xa.md",
        "text": "Ký túc xá có 1.200 chỗ ở; phí ở ký túc xá là 500.000 đồng mỗi tháng.",
    },
    {
        "id": "p4",
        "source": "tuyen-sinh.md",
        "text": "Ngành Khoa học Máy tính có mã ngành 7480101 và tuyển 240 chỉ tiêu năm 2026.",
    },
    {
        "id": "p5",
        "text": "Thư viện mở cửa từ 7 giờ đến 21 giờ các ngày trong tuần.",
    },
]

QUESTIONS = [
    {
        "id": "q1",
        "question": "Học phí chương trình chuẩn năm 2026 là bao nhiêu?",
        "type": "factoid",
        "answer": "32.000.000 đồng mỗi năm",
        "relevant_ids": ["p1"],
        "sources": [{"source": "hoc-phi.pdf", "page": 2}],
        "key_facts": ["32.000.000"],
    },
    {
        "id": "q2",
        "question": "ma nganh khoa hoc may tinh la gi",
        "type": "factoid",
        "answer": "7480101",
        "relevant_ids": ["p4"],
        "sources": [{"source": "tuyen-sinh.md", "page": None}],
        "key_facts": ["7480101"],
    },
    {
        "id": "q3",
        "question": "Phí ký túc xá mỗi tháng bao nhiêu và hạn đóng học phí là khi nào?",
        "type": "multi_hop",
        "answer": "500.000 đồng; 15/10",
        "relevant_ids": ["p3", "p2"],
        "sources": [{"source": "ky-tuc-xa.md", "page": None}, {"source": "hoc-phi.pdf", "page": 3}],
        "key_facts": ["500.000"],
    },
    {
        "id": "q4",
        "question": "Giá vé máy bay từ Hà Nội đi Tokyo tháng sau là bao nhiêu?",
        "type": "out_of_scope",
        "answer": "",
    },
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return path
