"""What the document augmentation tests share: two small documents and a scripted LLM stub that
answers like a careful model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.core.settings import LlmSettings
from bot.llm.client import load_prompt
from tests.fakes.openai_stub import OpenAIStub

FEES = """# Học phí ngành Thiết kế Vi mạch

## Mức thu

Ngành Thiết kế Vi mạch thu 28.500.000 đồng mỗi năm học 2026-2027, đóng theo từng học kỳ.

## Hạn nộp

Sinh viên nộp học phí trước ngày 15/9/2026 tại phòng Kế hoạch - Tài chính.
"""
DORM = """# Ký túc xá khu Vi mạch

Ký túc xá có 1200 chỗ ở, phòng 4 người, giá 450.000 đồng mỗi tháng.
"""
MARK = "quyzzle"  # a word only the rewrites write: what search finds only in augmented text
PROMPTS = {
    kind: load_prompt(LlmSettings(), f"augment_{kind}") for kind in ("context", "chunk", "summary")
}
Reply = Callable[[dict[str, Any]], str]


def kind_of(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    return next(kind for kind, prompt in PROMPTS.items() if prompt == system)


def user(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def title_of(body: dict[str, Any]) -> str:
    return user(body).split("\n", 1)[0].split(": ", 1)[1]


def faithful(body: dict[str, Any]) -> str:
    """What a careful model would reply: no number that is not in the source."""
    kind = kind_of(body)
    if kind == "context":
        return f"Thông báo của Phòng Tuyển sinh về {title_of(body)}."
    if kind == "summary":
        return f"Tài liệu {title_of(body)} nói về mức thu và chỗ ở."
    passage = user(body).split("Passage:\n", 1)[1]
    return f"Đoạn này thuộc {title_of(body)} {MARK}.\n\n{passage}"


def chunks_then(rewrite: Reply) -> Reply:
    """``faithful`` for contexts and summaries, ``rewrite`` for chunks."""
    return lambda body: rewrite(body) if kind_of(body) == "chunk" else faithful(body)


def script(stub: OpenAIStub, reply: Reply, n: int = 40) -> None:
    for _ in range(n):
        stub.script_chat(reply)


def chats(stub: OpenAIStub) -> int:
    return len(stub.requests_to("/v1/chat/completions"))
