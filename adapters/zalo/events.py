"""Reading the Zalo OA webhook's events (API v3): one event per request. A text that is one of
our vote payloads (the hidden query an answer's 👍/👎 button sends, ``adapters.zalo.oa_api``)
is a vote, not a question."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from adapters.payloads import is_json_int, json_body
from bot.core.errors import WebhookPayloadError
from bot.core.messages import (
    InboundBatch,
    InboundKind,
    InboundMessage,
    RawRequest,
    SkippedEvent,
    Vote,
)
from bot.core.votes import THUMBS, read_vote

log = logging.getLogger(__name__)

# Events whose ``sender`` is the OA and whose ``recipient`` is the user.
_TO_USER_EVENTS: Final = frozenset({"user_received_message", "user_seen_message"})
_UNSUPPORTED_EVENTS: Final = frozenset(
    f"user_send_{what}"
    for what in ("image", "sticker", "file", "audio", "video", "gif", "location", "link")
)


def parse_event(raw: RawRequest) -> InboundBatch:
    """The one event of a request. Events that name no user (OA-level notices) are
    acknowledged but not returned: there is no conversation to store them in. A JSON object
    that is not a readable event (no event_name, a text without msg_id...) is skipped:
    ``WebhookPayloadError`` only when the body is not an object at all."""
    body = event_body(raw)
    try:
        return InboundBatch(_read_event(body))
    except WebhookPayloadError as exc:
        name = body.get("event_name")
        where = f"event {name}" if isinstance(name, str) and name else "event"
        return InboundBatch(skipped=[SkippedEvent(where[:80], str(exc))])


def _read_event(body: dict[str, Any]) -> list[InboundMessage]:
    event = body.get("event_name")
    if not isinstance(event, str) or not event:
        raise WebhookPayloadError("zalo: no event_name")
    timestamp = required_id(body, "timestamp")
    sent_at = _sent_at(timestamp)
    message = body.get("message")
    if message is not None and not isinstance(message, dict):
        raise WebhookPayloadError("zalo: 'message' is not an object")
    message = message or {}
    msg_id = zalo_id(message.get("msg_id"))
    given_text = message.get("text")
    text = given_text if isinstance(given_text, str) else ""

    kind: InboundKind
    vote: Vote | None = None
    if event == "user_send_text":
        user = required_id(_object(body, "sender"), "id")
        if msg_id is None:
            raise WebhookPayloadError("zalo: user_send_text without message.msg_id")
        if not isinstance(given_text, str):
            raise WebhookPayloadError("zalo: user_send_text without message.text")
        kind, event_id = "text", msg_id
        vote = read_vote(given_text)
        if vote is not None:
            kind, text = "vote", THUMBS[vote.value]
    elif event == "follow":
        user = required_id(_object(body, "follower"), "id")
        kind, event_id, text = "follow", f"follow:{user}:{timestamp}", ""
    else:
        found = _user_of(event, body)
        if found is None:
            log.debug("zalo: %s names no user; not stored", event)
            return []
        user = found
        if event in _UNSUPPORTED_EVENTS:
            kind, event_id = "unsupported", msg_id or f"{event}:{user}:{timestamp}"
        else:
            # The OA's message ids recur across events (oa_send_text, then
            # user_received_message, then user_seen_message): keep the event name in the
            # key so that the dedup does not drop the later ones.
            kind = "event"
            event_id = f"{event}:{msg_id}" if msg_id else f"{event}:{user}:{timestamp}"
    return [
        InboundMessage(
            channel="zalo",
            event_id=event_id,
            external_user_id=user,
            kind=kind,
            text=text,
            sent_at=sent_at,
            raw=body,
            vote=vote,
        )
    ]


def event_body(raw: RawRequest) -> dict[str, Any]:
    body = json_body(raw)
    if not isinstance(body, dict):
        raise WebhookPayloadError("zalo: the body is not a JSON object")
    return body


def zalo_id(value: object) -> str | None:
    """A Zalo id as a string: ids are 64-bit numbers, sent as strings (kept as such)."""
    if isinstance(value, str):
        return value or None
    if is_json_int(value):
        return str(value)
    return None


def required_id(obj: Mapping[str, Any], key: str) -> str:
    value = zalo_id(obj.get(key))
    if value is None:
        raise WebhookPayloadError(f"zalo: no '{key}'")
    return value


def _object(body: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = body.get(key)
    if not isinstance(value, dict):
        raise WebhookPayloadError(f"zalo: no '{key}' object")
    return value


def _user_of(event: str, body: Mapping[str, Any]) -> str | None:
    if event in ("follow", "unfollow"):
        key = "follower"
    elif event.startswith("oa_send_") or event in _TO_USER_EVENTS:
        key = "recipient"
    else:
        key = "sender"
    party = body.get(key)
    return zalo_id(party.get("id")) if isinstance(party, dict) else None


def _sent_at(timestamp: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(timestamp) / 1000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None
