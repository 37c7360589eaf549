"""Helpers shared by the adapters' tests."""

from __future__ import annotations

# A cited answer in the shape the answerer writes: the sources section is what the Telegram and
# Messenger adapters turn into link buttons.
CITED = (
    "Theo tài liệu tuyển sinh của trường:\n- Học phí năm 2026 là 32.500.000 đồng/năm. [1]\n"
    "- Hạn nộp học phí là 28/8/2026. [2]\n\n"
    "Nguồn:\n[1] Học phí năm học 2026–2027 — https://tuyensinh.shut.example.vn/hoc-phi\n"
    "[2] Lịch tuyển sinh 2026 — https://tuyensinh.shut.example.vn/lich\n\n"
    "Thông tin trích từ tài liệu; bạn nên kiểm tra lại với phòng tuyển sinh."
)
