"""Reading Telegram's Update objects, for the webhook and for ``getUpdates`` alike.

Updates are read with python-telegram-bot's types (``telegram.Update.de_json``), after the checks
PTB leaves out (it takes a string update_id, a message without a chat). The JSON is kept as it
came, to be stored. A ``callback_query`` from one of our 👍/👎 buttons is a vote (kind ``vote``);
any other callback query is kept as an event.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from telegram import CallbackQuery, Message, Update, User

from adapters.payloads import is_json_int
from bot.core.errors import WebhookPayloadError
from bot.core.messages import InboundKind, InboundMessage
from bot.core.votes import THUMBS, read_vote

# "/start", "/start@my_bot", "/start <deep-link payload>"
_COMMAND = re.compile(r"/(start|help)(?:@\w+)?(?=\s|$)", re.ASCII)
# Message fields carrying something other than text (core.telegram.org/bots/api#message).
_MEDIA = (
    "animation",
    "audio",
    "checklist",
    "contact",
    "dice",
    "document",
    "game",
    "invoice",
    "location",
    "paid_media",
    "photo",
    "poll",
    "sticker",
    "story",
    "venue",
    "video",
    "video_note",
    "voice",
)


def parse_update(data: Any) -> list[InboundMessage]:
    """The one message an Update carries; ``WebhookPayloadError`` if it is not an Update."""
    if not isinstance(data, dict):
        raise WebhookPayloadError("a Telegram update must be a JSON object")
    if not is_json_int(data.get("update_id")):  # PTB would take "1"
        raise WebhookPayloadError("a Telegram update must have an integer update_id")
    for key in ("message", "edited_message"):
        if key in data and not isinstance(data[key], dict):
            raise WebhookPayloadError(f"a Telegram {key} must be a JSON object")
    try:
        update = Update.de_json(data, bot=None)  # copies what it reads: ``data`` stays as it came
    except Exception as exc:  # PTB's constructors raise whatever a missing or odd field causes
        raise WebhookPayloadError(
            f"not a Telegram update: {type(exc).__name__}: {exc}"[:300]
        ) from exc
    event_id = str(update.update_id)
    if update.message is not None:
        return [_message(event_id, update.message, update, data)]
    if update.edited_message is not None:
        # Stored, not answered: the answer to the first version has been sent already.
        edited = _message(event_id, update.edited_message, update, data)
        return [replace(edited, kind="event")]
    if update.callback_query is not None:
        vote = _vote(event_id, update.callback_query, update, data)
        if vote is not None:
            return [vote]
    return [_other(event_id, update, data)]


def _vote(
    event_id: str, query: CallbackQuery, update: Update, raw: dict[str, Any]
) -> InboundMessage | None:
    """A tap on one of our 👍/👎 buttons, or None for any other callback query. The voter is
    the chat the answer went to (a private chat's id is its user's id)."""
    payload = query.data
    vote = read_vote(payload, ack_id=query.id) if isinstance(payload, str) else None
    if vote is None or not isinstance(query.id, str) or not query.id:
        return None
    chat: Any = query.message.chat if query.message is not None else None
    person: Any = query.from_user
    if chat is not None and is_json_int(chat.id):
        voter = str(chat.id)
    elif person is not None and is_json_int(person.id):
        voter = str(person.id)
    else:
        raise WebhookPayloadError("a Telegram callback query must name its chat or its sender")
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=voter,
        kind="vote",
        text=THUMBS[vote.value],
        user_name=_name(person),
        raw=raw,
        vote=vote,
    )


def _message(
    event_id: str, message: Message, update: Update, raw: dict[str, Any]
) -> InboundMessage:
    # PTB does not check types: a message without a chat or with a string id passes.
    chat: Any = message.chat
    if chat is None or not is_json_int(chat.id):
        raise WebhookPayloadError("a Telegram message must have an integer chat.id")
    text = message.text
    kind: InboundKind
    if text is not None:
        if not isinstance(text, str):
            raise WebhookPayloadError("a Telegram message's text must be a string")
        command = _COMMAND.match(text)
        kind, text = ("command", f"/{command[1]}") if command else ("text", text)
    elif any(getattr(message, key, None) for key in _MEDIA):
        caption = message.caption
        kind, text = "unsupported", caption if isinstance(caption, str) else ""
    else:  # a service message: someone joined, a pin, a chat photo changed...
        kind, text = "event", ""
    sender = message.from_user
    locale = sender.language_code if sender is not None else None
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=str(chat.id),
        kind=kind,
        text=text,
        sent_at=message.date,
        user_name=_name(sender),
        locale=locale if isinstance(locale, str) else None,
        raw=raw,
    )


def _other(event_id: str, update: Update, raw: dict[str, Any]) -> InboundMessage:
    """A callback query, a chat member change, a channel post...: kept, not answered."""
    # The update's one payload object: its JSON key is PTB's attribute name.
    key = next((k for k in raw if k != "update_id"), None)
    payload = getattr(update, key, None) if key is not None else None
    chat, person = update.effective_chat, update.effective_user
    who = chat.id if chat is not None and is_json_int(chat.id) else None
    if who is None and person is not None and is_json_int(person.id):
        who = person.id
    sent_at = getattr(payload, "date", None)
    return InboundMessage(
        channel="telegram",
        event_id=event_id,
        external_user_id=str(who) if who is not None else "unknown",
        kind="event",
        sent_at=sent_at if sent_at is not None and hasattr(sent_at, "tzinfo") else None,
        user_name=_name(person),
        raw=raw,
    )


def _name(user: User | None) -> str | None:
    if user is None:
        return None
    names = [user.first_name, user.last_name]
    return " ".join(n for n in names if isinstance(n, str) and n) or None
