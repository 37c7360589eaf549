"""The web chat's wire format: the request it takes, the JSON and the server-sent events it
gives back (described in ``bot.web.webchat``), and the limits on its size: ``MAX_CHAT_TEXT``
characters of text (the page's ``maxlength`` is this same constant), in a body of at most
``MAX_CHAT_BODY`` bytes."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.core.citations import public_citation
from bot.core.errors import ChatRequestError, ChatTextTooLongError
from bot.db.models import Message

MAX_CHAT_TEXT = 2000  # characters; the page's textarea has the same maxlength
# The longest text the page can send, as JSON can spell it: an astral character escaped as a
# surrogate pair (a backslash-u escape each half) takes 12 bytes; plus the ids and the keys.
MAX_CHAT_BODY = 12 * MAX_CHAT_TEXT + 1024
VISITOR_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
VISITOR_ID_RULE = "visitor_id must be 1-100 characters of A-Z a-z 0-9 _ -"


@dataclass(frozen=True)
class ChatRequest:
    visitor_id: str
    message_id: str  # canonical UUID text: the dedup key
    text: str


def parse_chat_request(raw: bytes) -> ChatRequest:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError: not UTF-8; "[[[[…": deep
        raise ChatRequestError(f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ChatRequestError(
            'expected a JSON object {"visitor_id": ..., "message_id": ..., "text": ...}'
        )
    visitor_id = body.get("visitor_id")
    if not isinstance(visitor_id, str) or not VISITOR_ID.fullmatch(visitor_id):
        raise ChatRequestError(VISITOR_ID_RULE)
    message_id = body.get("message_id")
    try:
        canonical = str(uuid.UUID(message_id)) if isinstance(message_id, str) else ""
    except ValueError:
        canonical = ""
    if not canonical:
        raise ChatRequestError("message_id must be a UUID")
    text = body.get("text")
    if not isinstance(text, str):
        raise ChatRequestError("text must be a string")
    text = text.replace("\x00", "")  # PostgreSQL text cannot hold NUL
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate from a "\ud800" escape
        raise ChatRequestError("text is not valid Unicode") from exc
    if not text.strip():
        raise ChatRequestError("text is empty")
    if len(text) > MAX_CHAT_TEXT:
        raise ChatTextTooLongError(f"text is over {MAX_CHAT_TEXT} characters")
    return ChatRequest(visitor_id, canonical, text)


async def read_body(request: web.Request, limit: int) -> bytes | None:
    """The body, or None when it is over ``limit`` bytes (whatever the app's client_max_size)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    body = bytearray()
    async for chunk in request.content.iter_chunked(16 * 1024):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def public_citations(citations: list[Any]) -> list[dict[str, Any]]:
    """The stored citations as the browser gets them: titles and web addresses, no server
    paths, no internal ids."""
    return [public_citation(c) for c in citations]


def history_entry(message: Message, vote: int | None = None) -> dict[str, Any]:
    """One message of ``GET /api/chat/history``; ``vote``: the visitor's 👍 (1) or 👎 (-1) on
    it, if any (shown as chosen)."""
    return {
        "id": message.id,
        "message_id": message.event_id,
        "author": message.author.value,
        "text": message.text,
        "tier": message.tier,
        "citations": public_citations(message.citations),
        "created_at": message.created_at.isoformat(),
        "vote": vote,
    }


def dumps(payload: object) -> str:
    return json.dumps(payload, ensure_ascii=False)


class EventStream:
    """Server-sent events to a reader who may leave."""

    def __init__(self, response: web.StreamResponse) -> None:
        self.response = response
        self.gone = False

    async def send(self, event: str, payload: object) -> None:
        if self.gone:
            return
        try:
            await self.response.write(f"event: {event}\ndata: {dumps(payload)}\n\n".encode())
        except ConnectionResetError:
            self.gone = True

    async def close(self) -> None:
        if not self.gone:
            try:
                await self.response.write_eof()
            except ConnectionResetError:
                self.gone = True
