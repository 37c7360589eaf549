"""Tier 2 and the fallback with an LLM: numbered sources in, a checked, cited answer out."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass

from bot.llm.client import LlmClient, Message
from retrieval.search.hits import Hit

NO_ANSWER = "NO_ANSWER"
_CITE = re.compile(r"\[(\d{1,3})\]")


@dataclass(frozen=True)
class Generated:
    text: str
    cited: tuple[int, ...]  # source numbers cited, in order of first use


def source_block(hits: Sequence[Hit]) -> str:
    parts = []
    for n, hit in enumerate(hits, start=1):
        where = " › ".join(p for p in (hit.title, hit.heading_path) if p)
        page = f" (trang {hit.page})" if hit.page is not None else ""
        parts.append(f"[{n}] {where}{page}\n{hit.text.strip()}")
    return "\n\n".join(parts)


def answer_messages(system_prompt: str, question: str, hits: Sequence[Hit]) -> list[Message]:
    user = f"Sources:\n\n{source_block(hits)}\n\nQuestion: {question}"
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": user}]


def check_citations(reply: str, n_sources: int) -> Generated | None:
    """The reply if it cites at least one source and only sources that exist; else None."""
    text = reply.strip()
    if not text or NO_ANSWER in text:
        return None
    cited = [int(m) for m in _CITE.findall(text)]
    if not cited or any(n < 1 or n > n_sources for n in cited):
        return None
    return Generated(text, tuple(dict.fromkeys(cited)))


async def generate_answer(
    llm: LlmClient, system_prompt: str, question: str, hits: Sequence[Hit]
) -> tuple[Generated | None, str]:
    """(checked answer or None, raw reply). A None answer means: fall through to the fallback."""
    reply = await llm.complete(answer_messages(system_prompt, question, hits))
    return check_citations(reply, len(hits)), reply


async def stream_answer(
    llm: LlmClient, system_prompt: str, question: str, hits: Sequence[Hit]
) -> AsyncGenerator[str, None]:
    """The unchecked reply, delta by delta; the caller checks the whole with ``check_citations``.

    Closing this generator closes the LLM's stream (and its HTTP response) at once, not when
    the garbage collector gets to it: a reader that leaves early frees the connection.
    """
    deltas = llm.stream(answer_messages(system_prompt, question, hits))
    try:
        async for delta in deltas:
            yield delta
    finally:
        if isinstance(deltas, AsyncGenerator):
            await deltas.aclose()


async def generate_fallback(llm: LlmClient, system_prompt: str, question: str) -> str:
    messages: list[Message] = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": question},
    ]
    return (await llm.complete(messages)).strip()
