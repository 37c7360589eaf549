"""Reading the Page webhook's batched events: every event of every entry, standby ones too. A
tap on an answer's 👍/👎 quick reply (its payload one of ``bot.core.votes``) is a vote, not a
question.

https://developers.facebook.com/docs/messenger-platform/reference/webhook-events
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from adapters.payloads import json_body, json_str
from bot.core.errors import WebhookPayloadError
from bot.core.messages import (
    InboundBatch,
    InboundKind,
    InboundMessage,
    RawRequest,
    SkippedEvent,
    Vote,
)
from bot.core.settings import MessengerSettings
from bot.core.votes import THUMBS, read_vote

# The Page Inbox (Meta Business Suite) app: its echoes are a person answering in the inbox.
PAGE_INBOX_APP_ID = "263902037430900"

# Payloads of a "Get Started" button or a persistent-menu "start again" item, compared after
# _payload_key(); anything else a postback carries is read as a question.
GET_STARTED_PAYLOADS = frozenset({"GET_STARTED", "GET_STARTED_PAYLOAD", "START", "RESTART"})
# A postback payload that looks like a developer's code ("MENU_TUITION") is not a question:
# the button's title is what the user saw and tapped.
_OPAQUE_PAYLOAD = re.compile(r"[A-Z0-9_:.\-]+")

# Event fields that are not the event's kind, and, in order, the kinds worth naming in a
# fallback event id.
_ENVELOPE = frozenset({"sender", "recipient", "timestamp"})
_EVENT_TYPES = (
    "message",
    "postback",
    "delivery",
    "read",
    "reaction",
    "optin",
    "referral",
    "pass_thread_control",
    "take_thread_control",
    "request_thread_control",
    "app_roles",
    "account_linking",
    "policy_enforcement",
    "message_edit",
)


def parse_page_webhook(settings: MessengerSettings, raw: RawRequest) -> InboundBatch:
    """Every event of the body's entries; ``WebhookPayloadError`` if it is not a page webhook.

    The batch is read event by event: one that cannot be read (an ``app_roles`` or
    ``policy-enforcement`` event, which names no sender; an entry that is not an object) is
    skipped and named, and the student's message beside it is still returned. Rejecting the
    whole body would lose that message, and Meta would retry the same failing batch."""
    body = json_body(raw)
    if not isinstance(body, dict) or body.get("object") != "page":
        raise WebhookPayloadError("messenger: body is not a page webhook")
    entries = body.get("entry")
    if not isinstance(entries, list):
        raise WebhookPayloadError("messenger: entry is not a list")
    batch = InboundBatch()
    for e, entry in enumerate(entries):
        if not isinstance(entry, dict):
            batch.skipped.append(SkippedEvent(f"entry[{e}]", "not an object"))
            continue
        # Another app owning the thread (handover protocol) sends ours "standby" events:
        # stored, never answered.
        for field, standby in (("messaging", False), ("standby", True)):
            events = entry.get(field, [])
            if not isinstance(events, list):
                batch.skipped.append(SkippedEvent(f"entry[{e}].{field}", "not a list"))
                continue
            for i, event in enumerate(events):
                where = f"entry[{e}].{field}[{i}]"
                if not isinstance(event, dict):
                    batch.skipped.append(SkippedEvent(where, "not an object"))
                    continue
                try:
                    batch.messages.append(_event(settings, event, entry, standby=standby))
                except WebhookPayloadError as exc:
                    batch.skipped.append(SkippedEvent(where, str(exc)))
    return batch


def _event(
    settings: MessengerSettings, event: dict[str, Any], entry: Mapping[str, Any], *, standby: bool
) -> InboundMessage:
    sender = _id(event.get("sender"))
    recipient = _id(event.get("recipient"))
    sent_at = _time(event.get("timestamp")) or _time(entry.get("time"))
    event_type = next((t for t in _EVENT_TYPES if t in event), None) or next(
        (k for k in event if k not in _ENVELOPE), "event"
    )
    message = event.get("message")
    postback = event.get("postback")
    user = sender
    kind: InboundKind = "event"
    text = ""
    mid: Any = None
    vote: Vote | None = None

    if isinstance(message, dict):
        mid = message.get("mid")
        text = json_str(message.get("text"))
        if message.get("is_echo"):
            # Our page's own send, echoed: the user is the recipient.
            user = recipient
            kind = "staff" if _by_a_person(settings, message.get("app_id")) else "event"
        elif message.get("is_deleted"):
            kind = "event"  # the user unsent a message
        else:
            quick_reply = message.get("quick_reply")
            payload = json_str(quick_reply.get("payload")) if isinstance(quick_reply, dict) else ""
            vote = read_vote(payload)
            if vote is not None:
                kind, text = "vote", THUMBS[vote.value]
            else:
                # Our quick replies carry the whole FAQ question as payload; the title may be cut.
                text = (payload or text).strip()
                kind = "text" if text else "unsupported"
    elif isinstance(postback, dict):
        mid = postback.get("mid")
        payload = json_str(postback.get("payload")).strip()
        title = json_str(postback.get("title")).strip()
        if _payload_key(payload) in GET_STARTED_PAYLOADS:
            kind, text = "command", "/start"
        else:
            text = title if (not payload or _OPAQUE_PAYLOAD.fullmatch(payload)) else payload
            text = text or payload
            kind = "text" if text else "event"
    elif "optin" in event and user is None:
        # The checkbox plugin's opt-in names the person by user_ref, not by PSID.
        optin = event["optin"]
        user = json_str(optin.get("user_ref")) if isinstance(optin, dict) else None

    if not user:
        raise WebhookPayloadError(f"messenger: a {event_type} event without a sender id")
    if standby and kind != "staff":
        kind, vote = "event", None  # the thread is another app's: a person's echo still pauses us
    return InboundMessage(
        channel="messenger",
        event_id=json_str(mid) or _fallback_id(event_type, user, event),
        external_user_id=user,
        kind=kind,
        text=text,
        sent_at=sent_at,
        raw=event,
        vote=vote,
    )


def _by_a_person(settings: MessengerSettings, app_id: Any) -> bool:
    """Whether an echo was sent by someone other than tuvan: a person in the Page Inbox,
    or another app."""
    sender_app = json_str(app_id)  # echoes give app_id as a number
    ours = settings.app_id
    if ours:
        return sender_app != ours
    # Without our app id only the Page Inbox is known for sure; anything else may be us,
    # and taking our own echo for a person would silence the bot.
    return sender_app == PAGE_INBOX_APP_ID


def _id(party: Any) -> str | None:
    if isinstance(party, dict):
        value = party.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def _time(value: Any) -> datetime | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return None
    # Webhook timestamps are milliseconds; a few of Meta's own examples show seconds.
    seconds = value / 1000 if value > 100_000_000_000 else value
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _payload_key(payload: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", payload.upper()).strip("_")


def _fallback_id(event_type: str, user: str, event: Mapping[str, Any]) -> str:
    """A stable id for an event without a mid of its own (delivery, read, reaction, ...): the
    same event re-delivered gets the same id."""
    parts = [event_type, user, json_str(event.get("timestamp")) or "0"]
    detail = event.get(event_type)
    if isinstance(detail, dict):
        # A reaction's mid is the reacted-to message's, so it cannot be this event's id alone.
        parts += [json_str(detail.get(k)) for k in ("watermark", "mid", "action") if k in detail]
    return ":".join(parts)
