"""An optional LLM judge: is the bot's answer correct against the gold answer?

Any OpenAI-compatible chat endpoint. The judge sees the question, the gold answer and the bot's
answer, and must reply with one word; anything else counts as "incorrect" and is logged, so a
talkative judge lowers the score rather than inflating it.
"""

from __future__ import annotations

import logging

from bot.core.redact import display_url
from bot.core.settings import LlmSettings
from bot.llm.client import LlmClient

log = logging.getLogger(__name__)

SYSTEM = (
    "You grade a university admissions chatbot. Given a question, the reference answer and the "
    "chatbot's answer, reply with exactly one word: CORRECT if the chatbot's answer states the "
    "facts of the reference answer (other wording, language or extra detail is fine) and "
    "contradicts none of them, otherwise INCORRECT."
)


class Judge:
    def __init__(self, settings: LlmSettings) -> None:
        self._settings = settings
        self._client = LlmClient(settings)

    def describe(self) -> str:
        return f"{self._settings.model} at {display_url(self._settings.base_url or '')}"

    async def correct(self, question: str, reference: str, answer: str) -> bool:
        reply = await self._client.complete(
            [
                {"role": "system", "content": SYSTEM},
                {
                    "role": "user",
                    "content": f"Question: {question}\n\nReference answer: {reference}\n\n"
                    f"Chatbot's answer: {answer}\n\nVerdict:",
                },
            ]
        )
        word = reply.strip().strip(".!*\"'").upper()
        if word not in ("CORRECT", "INCORRECT"):
            log.warning("judge reply is not a verdict, counted as incorrect: %.80r", reply)
        return word == "CORRECT"

    async def aclose(self) -> None:
        await self._client.aclose()
