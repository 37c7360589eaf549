"""Sending a reply, as every platform does it: split to the platform's limit, sent part by part
(resuming after the parts an earlier attempt delivered), and a platform's refusal read as a
``SendError`` that says whether to try again."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aiohttp

from bot.core.citations import SourceLink
from bot.core.errors import SendError
from bot.core.messages import SendResult

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…:;])\s+")


def split_text(text: str, limit: int) -> list[str]:
    """Parts of at most ``limit`` characters, cut at paragraph borders, then sentence borders,
    then spaces, and only as a last resort inside a word. Nothing is dropped but the spaces at
    the cuts."""
    if limit < 1:
        raise ValueError("limit must be positive")
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    parts: list[str] = []
    current = ""
    for piece in _pieces(text, limit):
        sep = piece[0]
        body = piece[1]
        candidate = f"{current}{sep}{body}" if current else body
        if len(candidate) <= limit:
            current = candidate
        else:
            if current:
                parts.append(current)
            current = body
    if current:
        parts.append(current)
    return parts


def _pieces(text: str, limit: int) -> list[tuple[str, str]]:
    """(separator, piece) pairs, each piece at most ``limit`` long."""
    out: list[tuple[str, str]] = []
    for p_index, paragraph in enumerate(_PARAGRAPH.split(text)):
        sep = "\n\n" if p_index else ""
        for s_index, sentence in enumerate(_SENTENCE_END.split(paragraph.strip())):
            s_sep = sep if s_index == 0 else " "
            for w_index, chunk in enumerate(_by_words(sentence, limit)):
                out.append((s_sep if w_index == 0 else " ", chunk))
    return out


def _by_words(sentence: str, limit: int) -> list[str]:
    if len(sentence) <= limit:
        return [sentence]
    chunks: list[str] = []
    current = ""
    for word in sentence.split(" "):
        while len(word) > limit:  # a URL or a run without spaces
            if current:
                chunks.append(current)
                current = ""
            chunks.append(word[:limit])
            word = word[limit:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= limit:
            current = candidate
        else:
            chunks.append(current)
            current = word
    if current:
        chunks.append(current)
    return chunks


def button_title(link: SourceLink, limit: int) -> str:
    """ "[1] Học phí năm học 2026…" in at most ``limit`` characters."""
    title = f"[{link.n}] {' '.join(link.title.split())}"
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


PartT = TypeVar("PartT")


async def send_parts(
    parts: Sequence[PartT],
    first: int,
    send_one: Callable[[int, PartT], Awaitable[str | None]],
    on_sent: Callable[[int], Awaitable[None]] | None = None,
) -> SendResult:
    """Send ``parts[first:]`` in order with ``send_one(index, part)`` (which returns the
    platform's message id), telling ``on_sent`` how many parts are delivered after each one
    (the worker records it, so that a retry after a crash resumes after them). On a failure
    the error records how many parts were delivered, so that a retry starts after them: a
    split reply is never repeated from its beginning."""
    ids: list[str] = []
    for index in range(max(0, first), len(parts)):
        try:
            message_id = await send_one(index, parts[index])
        except SendError as exc:
            exc.parts_sent = index
            raise
        if message_id:
            ids.append(message_id)
        if on_sent is not None:
            await on_sent(index + 1)
    return SendResult(external_ids=tuple(ids), parts=len(parts))


async def read_json_response(response: aiohttp.ClientResponse, what: str) -> Any:
    """The JSON body of a platform response, or a retryable ``SendError`` if there is none."""
    try:
        return await response.json(content_type=None)
    except (aiohttp.ContentTypeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SendError(
            f"{what}: HTTP {response.status} with a body that is not JSON",
            retryable=response.status >= 500,
            status=response.status,
        ) from exc


def http_failure(
    status: int, what: str, detail: str, retry_after: float | None = None
) -> SendError:
    """A platform's HTTP error as a ``SendError``: 429 and 5xx are worth retrying, 4xx are not."""
    retryable = status == 429 or status >= 500
    return SendError(
        f"{what}: HTTP {status}: {detail}"[:500],
        retryable=retryable,
        retry_after=retry_after,
        status=status,
    )


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header given in seconds (the form Meta and Zalo use); None if absent
    or not a number."""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
