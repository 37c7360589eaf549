"""The one interface every platform adapter implements, and what they share.

``verify`` and ``parse`` are pure: bytes and headers in, values out, no I/O, so each platform's
payloads are tested without a server. ``send`` and ``typing`` talk to the platform over the
``aiohttp.ClientSession`` the process owns. Adapters never touch the database.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import aiohttp

from bot.core.citations import SourceLink
from bot.core.errors import SendError, WebhookPayloadError
from bot.core.messages import Capabilities, InboundMessage, OutboundReply, RawRequest, SendResult
from bot.core.types import Channel


class Adapter(Protocol):
    channel: Channel

    @property
    def capabilities(self) -> Capabilities:
        """The messaging window, quick replies, typing: what the worker asks before sending."""

    def verify(self, raw: RawRequest) -> None:
        """Raise ``WebhookAuthError`` unless the request comes from the platform."""

    def parse(self, raw: RawRequest) -> list[InboundMessage]:
        """Every event in the body (a list: Messenger batches); ``WebhookPayloadError`` if the
        body is not the platform's shape. Events tuvan has no use for come back as kind
        ``event``, so that they are stored."""

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        """Deliver ``reply`` (split to the platform's limit), or raise ``SendError``."""

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """Show that an answer is coming; best effort (errors are logged, not raised)."""


def secrets_equal(given: str | bytes | None, expected: str | bytes) -> bool:
    """Constant-time comparison; a missing value never matches (nor does an empty secret)."""
    if given is None or not expected:
        return False
    a = given.encode() if isinstance(given, str) else given
    b = expected.encode() if isinstance(expected, str) else expected
    return hmac.compare_digest(a, b)


def json_body(raw: RawRequest) -> Any:
    try:
        return json.loads(raw.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WebhookPayloadError(f"body is not JSON: {exc}") from exc


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
) -> SendResult:
    """Send ``parts[first:]`` in order with ``send_one(index, part)`` (which returns the
    platform's message id). On a failure the error records how many parts were delivered, so
    that a retry starts after them: a split reply is never repeated from its beginning."""
    ids: list[str] = []
    for index in range(max(0, first), len(parts)):
        try:
            message_id = await send_one(index, parts[index])
        except SendError as exc:
            exc.parts_sent = index
            raise
        if message_id:
            ids.append(message_id)
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
