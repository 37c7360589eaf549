"""The web chat: a page, an embeddable widget, and answers streamed as server-sent events.

The web chat is answered inline, in the serve process: the browser is waiting on the request
(the messaging platforms go through the queue and the worker instead). Every web message still
lands in the one conversation store: the visitor's message as an inbound row (channel "web",
``external_user_id`` the visitor id, ``event_id`` the client's message id) and the reply as an
outbound row (author bot, status sent) whose ``reply_to_id`` is the question's row.

Embedding on the university's site — one line; the site's origin must be listed in
``TUVAN_WEB__ALLOWED_ORIGINS`` (the page may only be framed by those sites, and only they may
call the API from their own pages)::

    <script src="https://bot.example/widget.js" async></script>

Optional attributes on that tag: ``data-lang="vi"|"en"`` (else the browser's language),
``data-position="left"`` (else bottom right).

``POST /api/chat`` takes ``{"visitor_id": "...", "message_id": "<uuid>", "text": "..."}`` and
answers with ``text/event-stream``::

    event: meta      {"tier": "documents"}                   the tier, once known (LLM mode)
    event: token     {"text": "..."}                         a piece of the reply, to append
    event: replace   {"reason": "..."}                       drop what was streamed so far
    event: done      {"message_id", "reply_id", "answer", "tier", "language", "citations",
                      "handover"}                            always last; ``answer`` is final

The message id is the idempotency key: the same id posted again is not answered again — the
stored reply comes back as a single ``done`` (after waiting for the first request if it is still
answering; 409 if it takes longer than ``duplicate_wait_s``). A message id already used by
another visitor, or for another text, is a 409.

``GET /api/chat/history?visitor_id=...`` gives ``{"messages": [...], "human": bool}``: the last
messages, and whether staff have the conversation; while they do, the page asks again every few
seconds (while it is visible) so that their replies appear without a reload.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from importlib import resources
from typing import Any

from aiohttp import web
from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer import replies
from bot.answer.answerer import StreamDone, StreamMeta, StreamReplace, StreamToken, clean_question
from bot.answer.followup import standalone_question
from bot.answer.replies import Answer
from bot.conversations.store import (
    bot_may_answer,
    citations_json,
    history,
    previous_questions,
    record_inbound,
    store_reply,
)
from bot.core.clock import utcnow
from bot.core.errors import ChatRequestError
from bot.core.messages import InboundMessage
from bot.core.settings import Settings
from bot.core.types import Channel
from bot.db.models import (
    Author,
    Contact,
    Conversation,
    Message,
    MessageStatus,
)
from bot.keys import RUNTIME
from bot.runtime import Runtime
from retrieval.text.language import detect_language

log = logging.getLogger(__name__)

CHANNEL: Channel = "web"
MAX_CHAT_BODY = 64 * 1024
VISITOR_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
POLL_S = 0.2  # how often a repeated message id looks for the first request's reply
SHUTDOWN_WAIT_S = 10.0  # answers under way get this long to finish when the server stops
_JSON_HEADERS = {"Cache-Control": "no-store"}


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
        raise ChatRequestError("visitor_id must be 1-100 characters of A-Z a-z 0-9 _ -")
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
    return ChatRequest(visitor_id, canonical, text)


# -- what a request turns into, before any answering ------------------------------------------


@dataclass(frozen=True)
class _Claimed:
    """This request answers the message."""

    inbound_id: int
    conversation_id: int
    attempt: int


@dataclass(frozen=True)
class _Stored:
    """Answered before: send the stored reply again."""

    reply: Message


@dataclass(frozen=True)
class _HandedOver:
    """Staff took over this conversation: the bot stays quiet."""


@dataclass(frozen=True)
class _Conflict:
    message: str
    retry_after: int | None = None


_Outcome = _Claimed | _Stored | _HandedOver | _Conflict


@dataclass(frozen=True)
class _Answering:
    task: asyncio.Task[tuple[Answer, int | None]]
    events: asyncio.Queue[tuple[str, dict[str, Any]] | None]  # None: no more events


async def _handed_over(session: AsyncSession, conversation_id: int) -> bool:
    conversation = await session.get(Conversation, conversation_id)
    if conversation is None:
        return False
    return not bot_may_answer(conversation.mode, conversation.paused_until, utcnow())


async def _claim(session: AsyncSession, inbound_id: int, lease: timedelta) -> int | None:
    """Take the message to answer (new, or left by a request that died): its attempt number."""
    now = utcnow()
    attempt = await session.scalar(
        update(Message)
        .where(
            Message.id == inbound_id,
            or_(
                Message.status.in_([MessageStatus.received, MessageStatus.failed]),
                and_(
                    Message.status == MessageStatus.answering,
                    or_(Message.lease_until.is_(None), Message.lease_until < now),
                ),
            ),
        )
        .values(
            status=MessageStatus.answering,
            lease_until=now + lease,
            attempts=Message.attempts + 1,
            error=None,
        )
        .returning(Message.attempts)
    )
    return None if attempt is None else int(attempt)


async def _reply_to(session: AsyncSession, inbound_id: int) -> Message | None:
    return await session.scalar(
        select(Message)
        .where(Message.reply_to_id == inbound_id, Message.author == Author.bot)
        .order_by(Message.id)
        .limit(1)
    )


async def _standalone(runtime: Runtime, claimed: _Claimed, text: str) -> str:
    """The visitor's question made standalone with their previous ones (bot.answer.followup), as the
    worker reads a follow-up on the other channels."""
    async with runtime.sessionmaker() as session:
        previous = await previous_questions(
            session,
            claimed.conversation_id,
            claimed.inbound_id,
            runtime.settings.worker.history_turns,
        )
    parts = runtime.answerer.parts
    return await standalone_question(text, previous, parts.guard, parts.llm, parts.processor)


async def _store_reply(
    session: AsyncSession,
    claimed: _Claimed,
    answer: Answer,
    details: dict[str, Any],
    question: str | None = None,
) -> int | None:
    """Store the reply and close the question, if this request still holds it; the reply id."""
    return await store_reply(
        session,
        inbound_id=claimed.inbound_id,
        attempt=claimed.attempt,
        conversation_id=claimed.conversation_id,
        channel=CHANNEL,
        text_=answer.answer,
        tier=answer.tier,
        citations=citations_json(answer.citations),
        details=details,
        question=question,  # a follow-up's standalone form
        delivered=True,  # streamed to the browser by this request
        wants_staff=answer.wants_staff,
        tag_question=False,  # the history shows the tier on the reply only
    )


async def _visitor_history(
    session: AsyncSession, visitor_id: str, limit: int
) -> tuple[list[Message], bool]:
    """The visitor's last messages, and whether a person has the conversation (the page then
    looks for their replies every few seconds)."""
    conversation = await session.scalar(
        select(Conversation)
        .join(Contact, Contact.id == Conversation.contact_id)
        .where(Contact.channel == CHANNEL, Contact.external_id == visitor_id)
    )
    if conversation is None:
        return [], False
    human = not bot_may_answer(conversation.mode, conversation.paused_until, utcnow())
    return await history(session, conversation.id, limit=limit), human


def _details(answer: Answer, streamed: bool) -> dict[str, Any]:
    data = {
        "language": answer.language,
        "reason": answer.reason,
        "faq_external_id": answer.faq_external_id,
        "chunk_ids": answer.chunk_ids,
        "scores": answer.scores,
        "timings_ms": answer.timings_ms,
        "streamed": streamed,
    }
    # Scores are diagnostics: whatever numpy or a reranker put there must not fail the insert.
    return dict(json.loads(json.dumps(data, default=str)))


def _error_answer(settings: Settings, text: str, error: BaseException) -> Answer:
    language = detect_language(clean_question(text))
    return Answer(
        tier="fallback",
        answer=replies.no_information_reply(settings.contact, language),
        language=language,
        reason=f"error while answering: {type(error).__name__}",
    )


# -- HTTP ---------------------------------------------------------------------------------------


def _public_citations(citations: list[Any]) -> list[dict[str, Any]]:
    return [
        {"n": c["n"], "title": c["title"], "url": c.get("url"), "page": c.get("page")}
        for c in citations
    ]


def _dumps(payload: object) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _cors(request: web.Request, settings: Settings) -> dict[str, str]:
    """CORS headers for an allowed origin (exact match), none for any other."""
    origin = request.headers.get("Origin")
    if origin is None or origin not in settings.web.allowed_origins:
        return {"Vary": "Origin"}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


def _json(
    request: web.Request, payload: object, *, status: int = 200, extra: dict[str, str] | None = None
) -> web.Response:
    runtime = request.config_dict[RUNTIME]
    headers = {**_JSON_HEADERS, **_cors(request, runtime.settings), **(extra or {})}
    return web.json_response(payload, status=status, headers=headers, dumps=_dumps)


def _error(
    request: web.Request, status: int, message: str, extra: dict[str, str] | None = None
) -> web.Response:
    return _json(request, {"error": message}, status=status, extra=extra)


def _unavailable(request: web.Request) -> web.Response:
    return _error(
        request, 503, "the chat is unavailable for a moment; try again", {"Retry-After": "5"}
    )


async def _read_body(request: web.Request, limit: int) -> bytes | None:
    """The body, or None when it is over ``limit`` bytes (whatever the app's client_max_size)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    body = bytearray()
    async for chunk in request.content.iter_chunked(16 * 1024):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


class _EventStream:
    """Server-sent events to a reader who may leave."""

    def __init__(self, response: web.StreamResponse) -> None:
        self.response = response
        self.gone = False

    async def send(self, event: str, payload: object) -> None:
        if self.gone:
            return
        try:
            await self.response.write(f"event: {event}\ndata: {_dumps(payload)}\n\n".encode())
        except ConnectionResetError:
            self.gone = True

    async def close(self) -> None:
        if not self.gone:
            try:
                await self.response.write_eof()
            except ConnectionResetError:
                self.gone = True


def _inline_hash(page: str, tag: str) -> str:
    """The CSP source for the one inline ``<tag>`` block of the page."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.DOTALL)
    if len(found) != 1:
        raise RuntimeError(f"chat.html must hold exactly one inline <{tag}> block")
    digest = hashlib.sha256(found[0].encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


class WebChat:
    """The routes' handlers, with the page and the widget read once."""

    def __init__(self, *, duplicate_wait_s: float = 30.0) -> None:
        static = resources.files("bot.web.webchat") / "static"
        self.page = (static / "chat.html").read_text(encoding="utf-8")
        self.widget_js = (static / "widget.js").read_text(encoding="utf-8")
        self.duplicate_wait_s = duplicate_wait_s
        self._running: set[asyncio.Task[tuple[Answer, int | None]]] = set()
        self._script_src = _inline_hash(self.page, "script")
        self._style_src = _inline_hash(self.page, "style")

    def content_security_policy(self, settings: Settings) -> str:
        ancestors = " ".join(["'self'", *settings.web.allowed_origins])
        return (
            f"default-src 'none'; script-src {self._script_src}; style-src {self._style_src}; "
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            f"frame-ancestors {ancestors}"
        )

    async def chat_page(self, request: web.Request) -> web.Response:
        settings = request.config_dict[RUNTIME].settings
        headers = {
            "Content-Security-Policy": self.content_security_policy(settings),
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-cache",
        }
        return web.Response(
            text=self.page, content_type="text/html", charset="utf-8", headers=headers
        )

    async def widget(self, request: web.Request) -> web.Response:
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600"}
        return web.Response(
            text=self.widget_js, content_type="text/javascript", charset="utf-8", headers=headers
        )

    async def preflight(self, request: web.Request) -> web.Response:
        cors = _cors(request, request.config_dict[RUNTIME].settings)
        if "Access-Control-Allow-Origin" not in cors:
            return web.Response(status=403, headers=cors)
        cors |= {
            "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
            "Access-Control-Allow-Headers": "Content-Type",
            "Access-Control-Max-Age": "600",
        }
        return web.Response(status=204, headers=cors)

    async def history(self, request: web.Request) -> web.Response:
        visitor_id = request.query.get("visitor_id", "")
        if not VISITOR_ID.fullmatch(visitor_id):
            return _error(request, 400, "visitor_id must be 1-100 characters of A-Z a-z 0-9 _ -")
        runtime = request.config_dict[RUNTIME]
        try:
            async with runtime.sessionmaker() as session:
                rows, human = await _visitor_history(
                    session, visitor_id, runtime.settings.web.history_messages
                )
        except SQLAlchemyError:
            log.exception("web chat: cannot read the history of a visitor")
            return _unavailable(request)
        messages = [
            {
                "id": m.id,
                "message_id": m.event_id,
                "author": m.author.value,
                "text": m.text,
                "tier": m.tier,
                "citations": _public_citations(m.citations),
                "created_at": m.created_at.isoformat(),
            }
            for m in rows
            if m.kind == "text"
        ]
        return _json(request, {"visitor_id": visitor_id, "human": human, "messages": messages})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        raw = await _read_body(request, MAX_CHAT_BODY)
        if raw is None:
            return _error(request, 413, f"the request body is over {MAX_CHAT_BODY} bytes")
        try:
            chat = parse_chat_request(raw)
        except ChatRequestError as exc:
            return _error(request, 400, str(exc))
        runtime = request.config_dict[RUNTIME]
        try:
            outcome = await self._begin(runtime, chat)
        except SQLAlchemyError:
            log.exception("web chat: cannot record message %s", chat.message_id)
            return _unavailable(request)
        if isinstance(outcome, _Conflict):
            extra = {"Retry-After": str(outcome.retry_after)} if outcome.retry_after else None
            return _error(request, 409, outcome.message, extra)
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # nginx: pass each event on at once
                **_cors(request, runtime.settings),
            }
        )
        await response.prepare(request)
        events = _EventStream(response)
        done: dict[str, Any] = {"message_id": chat.message_id, "handover": False}
        if isinstance(outcome, _Stored):
            reply = outcome.reply
            done |= {
                "reply_id": reply.id,
                "answer": reply.text,
                "tier": reply.tier,
                "language": reply.details.get("language"),
                "citations": _public_citations(reply.citations),
            }
        elif isinstance(outcome, _HandedOver):
            done |= {"reply_id": None, "answer": None, "tier": None, "handover": True}
        else:
            answering = self._answer_apart(runtime, chat, outcome)
            while (item := await answering.events.get()) is not None:
                await events.send(*item)
                if events.gone:  # the answer goes on without the reader, and is stored
                    return response
            # Shielded: a handler cancelled now (the reader left) must not cancel the answer.
            answer, reply_id = await asyncio.shield(answering.task)
            done |= {
                "reply_id": reply_id,
                "answer": answer.answer,
                "tier": answer.tier,
                "language": answer.language,
                "citations": _public_citations(citations_json(answer.citations)),
            }
        await events.send("done", done)
        await events.close()
        return response

    async def _begin(self, runtime: Runtime, chat: ChatRequest) -> _Outcome:
        lease = timedelta(seconds=runtime.settings.worker.lease_s)
        message = InboundMessage(
            channel=CHANNEL,
            event_id=chat.message_id,
            external_user_id=chat.visitor_id,
            kind="text",
            text=chat.text,
        )
        async with runtime.sessionmaker.begin() as session:
            recorded = await record_inbound(session, message)
            if recorded.message_id is not None:
                if await _handed_over(session, recorded.conversation_id):
                    await session.execute(
                        update(Message)
                        .where(Message.id == recorded.message_id)
                        .values(status=MessageStatus.skipped, done_at=utcnow())
                    )
                    return _HandedOver()
                # Claimed in the same transaction as the insert: no worker ever sees it waiting.
                attempt = await _claim(session, recorded.message_id, lease)
                assert attempt is not None  # the row was inserted just now, status received
                return _Claimed(recorded.message_id, recorded.conversation_id, attempt)
        return await self._await_first(runtime, chat, lease)

    async def _await_first(self, runtime: Runtime, chat: ChatRequest, lease: timedelta) -> _Outcome:
        """A repeated message id: the first request's reply, once there is one."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.duplicate_wait_s
        while True:
            async with runtime.sessionmaker.begin() as session:
                found = (
                    await session.execute(
                        select(Message, Contact.external_id)
                        .join(Conversation, Conversation.id == Message.conversation_id)
                        .join(Contact, Contact.id == Conversation.contact_id)
                        .where(Message.channel == CHANNEL, Message.event_id == chat.message_id)
                    )
                ).one_or_none()
                if found is None:  # deleted meanwhile (a staff clean-up): nothing to resend
                    return _Conflict("this message_id is no longer known; send a new one")
                inbound, visitor_id = found
                if visitor_id != chat.visitor_id or inbound.text != chat.text:
                    return _Conflict("this message_id was already used for another message")
                if inbound.status == MessageStatus.skipped:
                    return _HandedOver()
                if inbound.status == MessageStatus.answered:
                    reply = await _reply_to(session, inbound.id)
                    if reply is None:
                        return _Conflict("this message was answered by a person; reload the chat")
                    return _Stored(reply)
                attempt = await _claim(session, inbound.id, lease)
                if attempt is not None:  # the first request died before answering
                    return _Claimed(inbound.id, inbound.conversation_id, attempt)
            if loop.time() >= deadline:
                return _Conflict(
                    "this message is still being answered; try again in a few seconds",
                    retry_after=2,
                )
            await asyncio.sleep(POLL_S)

    def _answer_apart(self, runtime: Runtime, chat: ChatRequest, claimed: _Claimed) -> _Answering:
        """Answer in a task of its own, so that a reader who leaves (an aiohttp server with
        ``handler_cancellation`` cancels the handler) does not stop the answer being stored:
        the same message id sent again then gets it."""
        events: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        task = asyncio.create_task(self._answer(runtime, chat, claimed, events))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return _Answering(task, events)

    async def _answer(
        self,
        runtime: Runtime,
        chat: ChatRequest,
        claimed: _Claimed,
        events: asyncio.Queue[tuple[str, dict[str, Any]] | None],
    ) -> tuple[Answer, int | None]:
        try:
            return await self._answer_and_store(runtime, chat, claimed, events.put_nowait)
        finally:
            events.put_nowait(None)

    async def _answer_and_store(
        self,
        runtime: Runtime,
        chat: ChatRequest,
        claimed: _Claimed,
        emit: Callable[[tuple[str, dict[str, Any]]], None],
    ) -> tuple[Answer, int | None]:
        answer: Answer | None = None
        streamed = False
        question = chat.text
        try:
            question = await _standalone(runtime, claimed, chat.text)
            async for event in runtime.answerer.answer_stream(question):
                if isinstance(event, StreamMeta):
                    emit(("meta", {"tier": event.tier}))
                elif isinstance(event, StreamToken):
                    streamed = True
                    emit(("token", {"text": event.text}))
                elif isinstance(event, StreamReplace):
                    emit(("replace", {"reason": event.reason}))
                elif isinstance(event, StreamDone):
                    answer = event.answer
            if answer is None:
                raise RuntimeError("the answer stream ended without a final answer")
        except Exception as exc:  # the handler's edge: a polite reply, never a 500
            log.exception("web chat: answering message %d failed", claimed.inbound_id)
            if streamed:
                emit(("replace", {"reason": "error"}))
            answer = _error_answer(runtime.settings, chat.text, exc)
        try:
            async with runtime.sessionmaker.begin() as session:
                reply_id = await _store_reply(
                    session,
                    claimed,
                    answer,
                    _details(answer, streamed),
                    question if question != chat.text else None,
                )
        except Exception:  # the visitor still gets the answer; a retry re-answers later
            log.exception("web chat: storing the reply to message %d failed", claimed.inbound_id)
            return answer, None
        if reply_id is None:
            log.warning("web chat: message %d was taken over; reply not stored", claimed.inbound_id)
        return answer, reply_id

    async def finish_answers(self, app: web.Application) -> None:
        """On shutdown: let answers under way finish for a while, then cancel the rest (their
        messages stay leased, and a retry after the lease answers them)."""
        if self._running:
            await asyncio.wait(set(self._running), timeout=SHUTDOWN_WAIT_S)
        for task in set(self._running):
            task.cancel()


def setup_webchat(app: web.Application, *, duplicate_wait_s: float = 30.0) -> None:
    """Add the web chat's routes to ``app`` (which must hold ``RUNTIME`` by its first request).

    Routes: ``webchat.page`` GET / (the chat; ``?embed=1`` for the widget's frame),
    ``webchat.widget`` GET /widget.js, ``webchat.chat`` POST /api/chat,
    ``webchat.history`` GET /api/chat/history, and OPTIONS preflights for both API paths.
    The chat endpoint enforces its own 64 KB body limit, whatever ``client_max_size`` is.
    """
    chat = WebChat(duplicate_wait_s=duplicate_wait_s)
    app.on_shutdown.append(chat.finish_answers)
    app.router.add_get("/", chat.chat_page, name="webchat.page")
    app.router.add_get("/widget.js", chat.widget, name="webchat.widget")
    app.router.add_post("/api/chat", chat.chat, name="webchat.chat")
    app.router.add_get("/api/chat/history", chat.history, name="webchat.history")
    app.router.add_route("OPTIONS", "/api/chat", chat.preflight, name="webchat.chat_preflight")
    app.router.add_route(
        "OPTIONS", "/api/chat/history", chat.preflight, name="webchat.history_preflight"
    )
