"""``POST /api/chat/feedback``: the web visitor's 👍/👎 on one of the bot's answers.

Body ``{"reply_id": <the answer's id, from done.reply_id or the history's id>, "value": 1 | -1}``,
the visitor id in the ``X-Visitor-Id`` header (as for the history: never in a URL). Checked as
``POST /api/chat`` is, before anything is spent on it: the JSON content type (415) and the
origin (403), the address's bucket (429), the body's size and shape (413, 400), the visitor's
bucket (429). The buckets are the chat's limits under keys of their own, so voting never eats
into the questions a visitor may ask. Then the vote is recorded only on the bot's answer in this
visitor's own conversation (``bot.conversations.feedback``), else 404. Answers
``{"reply_id", "value"}``. A vote is never a question: nothing is answered.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError

from bot.conversations.feedback import record_vote
from bot.core.errors import ChatRequestError
from bot.core.votes import DOWN, UP
from bot.keys import RUNTIME
from bot.runtime import Runtime
from bot.web.rate_limits import RateLimit, RateLimiter
from bot.web.webchat.admission import TOO_FAST, Admission
from bot.web.webchat.answering import CHANNEL
from bot.web.webchat.protocol import VISITOR_ID, VISITOR_ID_RULE, read_body
from bot.web.webchat.replies import error_reply, json_reply, too_many, unavailable
from bot.web.webchat.visitors import VISITOR_HEADER

log = logging.getLogger(__name__)

MAX_FEEDBACK_BODY = 1024  # bytes: two small numbers and their keys
_BIGINT_MAX = 2**63 - 1


@dataclass(frozen=True)
class FeedbackRequest:
    reply_id: int
    value: int


def parse_feedback_request(raw: bytes) -> FeedbackRequest:
    """The body's answer id and vote, or ``ChatRequestError`` saying what is wrong."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ChatRequestError(f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ChatRequestError('expected a JSON object {"reply_id": ..., "value": 1 or -1}')
    reply_id = body.get("reply_id")
    if (
        not isinstance(reply_id, int)
        or isinstance(reply_id, bool)
        or not 0 < reply_id <= _BIGINT_MAX
    ):
        raise ChatRequestError("reply_id must be the id of an answer (a positive integer)")
    value = body.get("value")
    if value not in (UP, DOWN) or isinstance(value, bool):
        raise ChatRequestError("value must be 1 (👍) or -1 (👎)")
    return FeedbackRequest(reply_id, int(value))


class FeedbackHandler:
    """The route's handler, with the buckets it takes tokens from."""

    def __init__(self, admission: Admission) -> None:
        self.admission = admission  # the chat's content-type and origin rule
        self.limiter = RateLimiter()

    async def vote(self, request: web.Request) -> web.Response:
        runtime = request.config_dict[RUNTIME]
        refused = self.admission.refusal(request, runtime.settings)
        if refused is not None:
            return error_reply(request, *refused)
        limits = runtime.settings.limits
        try:
            wait_s = await self.admission.take_by_address(request, runtime, "vote")
        except SQLAlchemyError:
            log.exception("web chat: cannot check the vote rate limit of an address")
            return unavailable(request)
        if wait_s is not None:
            return too_many(request, TOO_FAST, wait_s)
        visitor_id = request.headers.get(VISITOR_HEADER, "")
        if not VISITOR_ID.fullmatch(visitor_id):
            return error_reply(request, 400, f"{VISITOR_HEADER}: {VISITOR_ID_RULE}")
        raw = await read_body(request, MAX_FEEDBACK_BODY)
        if raw is None:
            return error_reply(request, 413, f"the request body is over {MAX_FEEDBACK_BODY} bytes")
        try:
            vote = parse_feedback_request(raw)
        except ChatRequestError as exc:
            return error_reply(request, 400, str(exc))
        by_visitor = RateLimit(limits.chat_visitor_per_minute, limits.chat_visitor_burst)
        try:
            wait_s = await self._take(runtime, f"vote-visitor:{visitor_id}", by_visitor)
            if wait_s is not None:
                return too_many(request, TOO_FAST, wait_s)
            async with runtime.sessionmaker.begin() as session:
                outcome = await record_vote(
                    session,
                    channel=CHANNEL,
                    voter=visitor_id,
                    answer_id=vote.reply_id,
                    value=vote.value,
                )
        except SQLAlchemyError:
            log.exception("web chat: cannot record a vote")
            return unavailable(request)
        if not outcome.recorded:
            return error_reply(request, 404, "no answer of this conversation has this reply_id")
        return json_reply(request, {"reply_id": vote.reply_id, "value": vote.value})

    async def _take(self, runtime: Runtime, key: str, limit: RateLimit) -> float | None:
        async with runtime.sessionmaker.begin() as session:
            return await self.limiter.take(session, key[:200], limit)  # the column's width
