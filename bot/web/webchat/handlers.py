"""The web chat's routes: the page, the widget, ``POST /api/chat`` streamed as server-sent
events, ``GET /api/chat/history`` and the CORS preflights. Database errors map to 503 here.

``POST /api/chat`` spends nothing before it is admitted, in this order: the JSON content type
(415) and the origin (403), the client address's bucket (429), the body's size and shape
(413, 400), the visitor's bucket (429), a place among the answers in flight (503); only then is
the message stored, where a conversation with too many questions waiting holds it (429)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Any

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.feedback import votes_on
from bot.conversations.queue import ClaimedInbound
from bot.conversations.store import (
    bot_may_answer,
    citations_json,
    contact_conversation,
    history,
)
from bot.core.clock import utcnow
from bot.core.errors import ChatRequestError, ChatTextTooLongError
from bot.db.models import Message
from bot.keys import RUNTIME
from bot.runtime import Runtime
from bot.web.rate_limits import retry_after
from bot.web.webchat.admission import BUSY, HELD, TOO_FAST, Admission, client_gone
from bot.web.webchat.answering import CHANNEL, Answers, Conflict, HandedOver, Held, Stored
from bot.web.webchat.cors import cors_headers, preflight_headers
from bot.web.webchat.feedback import FeedbackHandler
from bot.web.webchat.in_flight import AnswerGate, HeldPolls, HeldSlot, Place, raise_open_file_limit
from bot.web.webchat.pages import Pages
from bot.web.webchat.protocol import (
    MAX_CHAT_BODY,
    VISITOR_ID,
    VISITOR_ID_RULE,
    ChatRequest,
    EventStream,
    history_entry,
    parse_chat_request,
    public_citations,
    read_body,
)
from bot.web.webchat.replies import error_reply, json_reply, too_many, unavailable
from bot.web.webchat.updates import ReplyWatch, newest_after
from bot.web.webchat.visitors import VISITOR_HEADER, is_stale, retire_if_stale

log = logging.getLogger(__name__)

_CURSOR = re.compile(r"[0-9]{1,18}")  # a message id (bigint), as GET /api/chat/updates takes it


async def _visitor_history(
    session: AsyncSession, visitor_id: str, limit: int
) -> tuple[list[Message], bool]:
    """The visitor's last messages, and whether a person has the conversation (the page then
    looks for their replies every few seconds)."""
    conversation = await contact_conversation(session, CHANNEL, visitor_id)
    if conversation is None:
        return [], False
    human = not bot_may_answer(conversation.mode, conversation.paused_until, utcnow())
    return await history(session, conversation.id, limit=limit), human


class WebChat:
    """The routes' handlers."""

    def __init__(self, *, duplicate_wait_s: float = 30.0) -> None:
        self.pages = Pages()
        self.answers = Answers(duplicate_wait_s=duplicate_wait_s)
        self.admission = Admission()
        self.gate = AnswerGate(places=4, wait_s=1.0)  # replaced from the settings on start-up
        self.feedback = FeedbackHandler(self.admission)
        self.watch = ReplyWatch()
        self.held = HeldPolls(1_000)  # replaced from the settings on start-up

    async def preflight(self, request: web.Request) -> web.Response:
        settings = request.config_dict[RUNTIME].settings
        allowed = preflight_headers(request, settings)
        if allowed is None:
            return web.Response(status=403, headers=cors_headers(request, settings))
        return web.Response(status=204, headers=allowed)

    async def history(self, request: web.Request) -> web.Response:
        if "visitor_id" in request.query:  # a URL ends up in logs: the id goes in a header
            return error_reply(request, 400, f"send the visitor id in the {VISITOR_HEADER} header")
        visitor_id = request.headers.get(VISITOR_HEADER, "")
        if not VISITOR_ID.fullmatch(visitor_id):
            return error_reply(request, 400, f"{VISITOR_HEADER}: {VISITOR_ID_RULE}")
        runtime = request.config_dict[RUNTIME]
        days = runtime.settings.web.visitor_days  # the page forgets an id unused this long
        try:
            wait_s = await self.admission.take_by_address(request, runtime, "reads")
            if wait_s is not None:
                return too_many(request, TOO_FAST, wait_s)
            async with runtime.sessionmaker() as session:  # a read: nothing is written
                if await is_stale(session, visitor_id, days=days, now=utcnow()):
                    expired = {
                        "expired": True, "visitor_days": days, "human": False, "messages": []
                    }  # fmt: skip
                    return json_reply(request, expired)
                rows, human = await _visitor_history(
                    session, visitor_id, runtime.settings.web.history_messages
                )
                votes = await votes_on(session, [m.id for m in rows if m.tier is not None])
        except SQLAlchemyError:
            log.exception("web chat: cannot read the history of a visitor")
            return unavailable(request)
        messages = [history_entry(m, votes.get(m.id)) for m in rows if m.kind == "text"]
        found = {"expired": False, "visitor_days": days, "human": human, "messages": messages}
        return json_reply(request, found)

    async def updates(self, request: web.Request) -> web.Response:
        """``GET /api/chat/updates?since=<id>``: ``{"changed", "newest"}`` as soon as the
        visitor's conversation has a message after ``since``, else after the wait
        (``bot.web.webchat.updates``)."""
        visitor_id = request.headers.get(VISITOR_HEADER, "")
        if not VISITOR_ID.fullmatch(visitor_id):
            return error_reply(request, 400, f"{VISITOR_HEADER}: {VISITOR_ID_RULE}")
        since_text = request.query.get("since", "0")
        if not _CURSOR.fullmatch(since_text):
            return error_reply(request, 400, "since must be a message id (0 or more)")
        since = int(since_text)
        runtime = request.config_dict[RUNTIME]
        wait_s = self.watch.wait_limit(runtime.settings.web.updates_wait_s)
        generation = self.watch.generation
        address = self.admission.address(request, runtime)
        try:
            refused = await self.admission.take_by_address(request, runtime, "reads")
            if refused is not None:
                return too_many(request, TOO_FAST, refused)
            async with runtime.sessionmaker() as session:
                found = await newest_after(session, visitor_id, since)
        except SQLAlchemyError:
            log.exception("web chat: cannot look for updates of a visitor")
            return unavailable(request)
        if found.newest is not None:
            return json_reply(request, {"changed": True, "newest": found.newest})
        held = self.held.take(address, runtime.settings.limits.updates_held_per_address)
        if not isinstance(held, HeldSlot):
            return error_reply(request, held, BUSY, {"Retry-After": retry_after(wait_s / 5)})
        try:
            # 0: the visitor has not written yet; the page asks again after its first message.
            with held, self.watch.holding(found.conversation_id or 0, generation) as woken:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), wait_s)
                if found.conversation_id and (woken.is_set() or not self.watch.listening):
                    async with runtime.sessionmaker() as session:
                        found = await newest_after(session, visitor_id, since)
        except SQLAlchemyError:
            log.exception("web chat: cannot look for updates of a visitor")
            return unavailable(request)
        return json_reply(request, {"changed": found.newest is not None, "newest": found.newest})

    async def start(self, app: web.Application) -> None:
        """On start-up, with the settings: the cap on answers in flight, and the LISTEN
        connection that wakes the pages waiting for staff replies."""
        runtime = app[RUNTIME]
        limits = runtime.settings.limits
        self.gate = AnswerGate(limits.answers_in_flight, limits.answers_wait_s)
        files = raise_open_file_limit()
        self.held = HeldPolls(limits.updates_held_max or max(16, files // 2))
        self.watch.start(runtime.engine.url.render_as_string(hide_password=False))

    async def stop(self, app: web.Application) -> None:
        await self.watch.stop()

    async def _take_tokens(
        self, request: web.Request, runtime: Runtime, visitor_id: str | None
    ) -> web.StreamResponse | None:
        """A token of the address's (and network's) buckets and of the visitor's (if known);
        the refusal when one is empty or the buckets cannot be read."""
        try:
            wait_s = await self.admission.take_by_address(request, runtime)
            if wait_s is None and visitor_id is not None:
                wait_s = await self.admission.take_by_visitor(runtime, visitor_id)
        except SQLAlchemyError:
            log.exception("web chat: cannot check a rate limit")
            return unavailable(request)
        return too_many(request, TOO_FAST, wait_s) if wait_s is not None else None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        runtime = request.config_dict[RUNTIME]
        refused = self.admission.refusal(request, runtime.settings)
        if refused is not None:
            status, message = refused
            return error_reply(request, status, message)
        raw = await read_body(request, MAX_CHAT_BODY)
        try:
            if raw is None:
                raise ChatTextTooLongError(f"the request body is over {MAX_CHAT_BODY} bytes")
            chat = parse_chat_request(raw)
        except ChatRequestError as exc:
            # A bad request takes its address's token too: a client looping on them is
            # refused like any other.
            busy = await self._take_tokens(request, runtime, visitor_id=None)
            if busy is not None:
                return busy
            status = 413 if isinstance(exc, ChatTextTooLongError) else 400
            return error_reply(request, status, str(exc))
        # A question the gate refused (503) and the page sent again paid its tokens with its
        # first try: charged again, a student's resends behind a flood would empty their own
        # buckets and turn a short wait into a 429's long one.
        if not self.gate.refused_before(chat.message_id):
            busy = await self._take_tokens(request, runtime, chat.visitor_id)
            if busy is not None:
                return busy
        address = self.admission.address(request, runtime)
        network = runtime.settings.limits.network_of(address) or ""
        place = await self.gate.enter(network, ticket=chat.message_id)
        if place is None:
            # Sent again, the request keeps its turn (its message id is its ticket): the sooner
            # it comes back, the sooner it is answered. "0": at once (the page waits a quarter
            # of a second); the line itself paces it, holding a resend up to `wait_s` again.
            return error_reply(request, 503, BUSY, {"Retry-After": "0"})
        try:
            return await self._chat_in_place(request, runtime, chat, place)
        finally:
            if not place.handed:
                place.release()

    async def _chat_in_place(
        self, request: web.Request, runtime: Runtime, chat: ChatRequest, place: Place
    ) -> web.StreamResponse:
        """The rest of a chat request, holding a place among the answers in flight: handed to
        the answer's task when there is an answer to run, else given back by the caller."""
        if client_gone(request):  # gave up while waiting for a place: nothing stored
            return error_reply(request, 503, BUSY)
        try:
            await retire_if_stale(runtime, chat.visitor_id)  # a stale id starts a new conversation
            outcome = await self.answers.begin(runtime, chat)
        except SQLAlchemyError:
            log.exception("web chat: cannot record message %s", chat.message_id)
            return unavailable(request)
        if isinstance(outcome, Conflict):
            extra = {"Retry-After": str(outcome.retry_after)} if outcome.retry_after else None
            return error_reply(request, 409, outcome.message, extra)
        if isinstance(outcome, Held):
            return too_many(request, HELD, runtime.settings.limits.answers_wait_s + 5)
        answering = None
        if isinstance(outcome, ClaimedInbound):
            if client_gone(request):
                await self.answers.abandon(runtime, outcome)
                return error_reply(request, 503, BUSY)
            answering = self.answers.answer_apart(runtime, chat, outcome, on_done=place.release)
            place.handed = True
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # nginx: pass each event on at once
                **cors_headers(request, runtime.settings),
            }
        )
        await response.prepare(request)
        events = EventStream(response)
        done: dict[str, Any] = {"message_id": chat.message_id, "handover": False}
        if isinstance(outcome, Stored):
            reply = outcome.reply
            done |= {
                "reply_id": reply.id,
                "answer": reply.text,
                "tier": reply.tier,
                "language": reply.details.get("language"),
                "citations": public_citations(reply.citations),
            }
        elif isinstance(outcome, HandedOver):
            done |= {"reply_id": None, "answer": None, "tier": None, "handover": True}
        elif answering is not None:
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
                "citations": public_citations(citations_json(answer.citations)),
            }
        await events.send("done", done)
        await events.close()
        return response


def setup_webchat(app: web.Application, *, duplicate_wait_s: float = 30.0) -> WebChat:
    """Add the web chat's routes to ``app`` (which must hold ``RUNTIME`` by its first request).

    Routes: ``webchat.page`` GET / (the chat; ``?embed=1`` for the widget's frame),
    ``webchat.widget`` GET /widget.js, ``webchat.chat`` POST /api/chat,
    ``webchat.history`` GET /api/chat/history (the visitor id in ``X-Visitor-Id``),
    ``webchat.feedback`` POST /api/chat/feedback (a 👍/👎, ``bot.web.webchat.feedback``),
    ``webchat.updates`` GET /api/chat/updates (long-polled: ``bot.web.webchat.updates``), and
    OPTIONS preflights for the API paths.
    The chat endpoint enforces its own body limit (``MAX_CHAT_BODY``), whatever
    ``client_max_size`` is, and the limits of ``TUVAN_LIMITS__*`` (see the module's docstring).
    Answers under way get a while to finish when the server shuts down (``on_shutdown``: before
    the server waits for its open requests, which are waiting for those answers).
    """
    chat = WebChat(duplicate_wait_s=duplicate_wait_s)
    app.on_startup.append(chat.start)
    app.on_shutdown.append(chat.stop)  # held update requests answer before the server waits
    app.on_shutdown.append(chat.answers.finish)
    app.router.add_get("/", chat.pages.chat_page, name="webchat.page")
    app.router.add_get("/widget.js", chat.pages.widget, name="webchat.widget")
    app.router.add_post("/api/chat", chat.chat, name="webchat.chat")
    app.router.add_get("/api/chat/history", chat.history, name="webchat.history")
    app.router.add_post("/api/chat/feedback", chat.feedback.vote, name="webchat.feedback")
    app.router.add_route(
        "OPTIONS", "/api/chat/feedback", chat.preflight, name="webchat.feedback_preflight"
    )
    app.router.add_get("/api/chat/updates", chat.updates, name="webchat.updates")
    app.router.add_route("OPTIONS", "/api/chat", chat.preflight, name="webchat.chat_preflight")
    app.router.add_route(
        "OPTIONS", "/api/chat/history", chat.preflight, name="webchat.history_preflight"
    )
    app.router.add_route(
        "OPTIONS", "/api/chat/updates", chat.preflight, name="webchat.updates_preflight"
    )
    return chat
