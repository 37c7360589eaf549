"""The LLM judge of the questions evaluation, against a stub served on loopback."""

from __future__ import annotations

from bot.answer.parts import AnswererParts
from bot.evaluation.judge import Judge
from tests.fakes.openai_stub import OpenAIStub


async def test_the_judge_grades_against_the_gold_answer(
    stub: OpenAIStub, parts: AnswererParts
) -> None:
    settings = parts.settings.llm.model_copy(update={"base_url": stub.base_url, "model": "judge"})
    judge = Judge(settings)
    stub.script_chat("CORRECT")
    stub.script_chat("Incorrect.")
    stub.script_chat("I think it is right")  # not a verdict: counted as incorrect
    try:
        assert await judge.correct("q?", "32.000.000 đồng", "32 triệu đồng") is True
        assert await judge.correct("q?", "32.000.000 đồng", "40 triệu") is False
        assert await judge.correct("q?", "32.000.000 đồng", "?") is False
    finally:
        await judge.aclose()
    sent = stub.requests_to("/v1/chat/completions")[0].body
    assert sent["model"] == "judge"
    assert "Reference answer: 32.000.000 đồng" in sent["messages"][1]["content"]
    assert judge.describe().startswith("judge at http://127.0.0.1")
