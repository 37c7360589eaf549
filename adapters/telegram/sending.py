"""Replies out over the Bot API: the text in parts of Telegram's size, as escaped HTML, with the
sources as link buttons and the 👍/👎 buttons of an answer (or else the suggested questions as a
keyboard) under the last part."""

from __future__ import annotations

import html
from collections.abc import Callable

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    KeyboardButton,
    LinkPreviewOptions,
    ReplyKeyboardMarkup,
)
from telegram.constants import ChatAction, ParseMode

from adapters.sending import button_title, send_parts, split_text
from adapters.telegram.client import BotApiClient
from bot.core.citations import SourceBlock, source_links
from bot.core.errors import SendError
from bot.core.messages import OutboundReply, SendResult
from bot.core.types import Language
from bot.core.votes import DOWN, THUMBS, UP, vote_payload

# sendMessage: "1-4096 characters after entities parsing" (core.telegram.org/bots/api#sendmessage)
MESSAGE_LIMIT = 4096
SOURCE_BUTTONS = 5  # link buttons under a reply, one per source
BUTTON_TITLE_MAX = 60
SUGGESTION_BUTTONS = 6  # the branding's suggested questions, as a reply keyboard (one a row)


async def send_reply(bot: Callable[[], BotApiClient], reply: OutboundReply) -> SendResult:
    """Send ``reply`` from ``reply.first_part`` on, with the client ``bot()`` gives (asked only
    once there is something to send)."""
    # The sources become link buttons under the last part, not lines of URLs.
    text, sources = source_links(reply.text)
    if sources is not None and len(sources.links) > SOURCE_BUTTONS:
        text, sources = reply.text, None  # more sources than buttons: all of them as text
    # The limit counts the text after entity parsing: split the plain text, then escape.
    parts = split_text(text, MESSAGE_LIMIT)
    if not parts:
        raise SendError("telegram sendMessage: the reply is empty", retryable=False)
    client = bot()

    async def send_one(index: int, part: str) -> str | None:
        last = index == len(parts) - 1
        sent = await client.call(
            "sendMessage",
            client.bot.send_message(
                chat_id=_chat_id(reply.external_user_id),
                text=html.escape(part, quote=False),
                parse_mode=ParseMode.HTML,
                link_preview_options=LinkPreviewOptions(is_disabled=True),
                reply_markup=(
                    _markup(sources, reply.quick_replies, reply.feedback_id, reply.language)
                    if last
                    else None
                ),
            ),
        )
        return str(sent.message_id)

    return await send_parts(parts, reply.first_part, send_one, reply.on_part_sent)


def vote_buttons(answer_id: int, language: Language = "vi") -> list[InlineKeyboardButton]:
    """👍 and 👎 in one row (the thumbs alone: no words to translate); a tap comes back as a
    ``callback_query`` whose ``data`` is the vote's payload (``bot.core.votes``: within the 64
    bytes ``callback_data`` may hold), naming ``language`` for the thanks."""
    return [
        InlineKeyboardButton(THUMBS[value], callback_data=vote_payload(answer_id, value, language))
        for value in (UP, DOWN)
    ]


def _markup(
    sources: SourceBlock | None,
    quick_replies: tuple[str, ...],
    feedback_id: int | None = None,
    language: Language = "vi",
) -> ReplyKeyboardMarkup | InlineKeyboardMarkup | None:
    """What goes under the last part: the source links and an answer's 👍/👎 (one inline
    keyboard), else the suggested questions. A message has one keyboard: the votes win over
    the suggested questions (which Telegram does not offer anyway: ``quick_replies`` 0)."""
    rows: list[list[InlineKeyboardButton]] = []
    if sources is not None:
        rows = [
            [InlineKeyboardButton(button_title(link, BUTTON_TITLE_MAX), url=link.url)]
            for link in sources.links[:SOURCE_BUTTONS]
        ]
    if feedback_id is not None:
        rows.append(vote_buttons(feedback_id, language))
    if rows:
        return InlineKeyboardMarkup(rows)
    if quick_replies:
        # Tapping a button sends its text as the user's next question.
        return ReplyKeyboardMarkup(
            [[KeyboardButton(q)] for q in quick_replies],
            one_time_keyboard=True,
            resize_keyboard=True,
        )
    return None


async def send_typing(client: BotApiClient, external_user_id: str) -> None:
    """``sendChatAction`` typing (it shows for about 5 s), or ``SendError``."""
    await client.call(
        "sendChatAction",
        client.bot.send_chat_action(
            chat_id=_chat_id(external_user_id), action=ChatAction.TYPING, read_timeout=10.0
        ),
    )


def _chat_id(external_user_id: str) -> int | str:
    """Chat ids are integers; a channel may also be addressed as "@name"."""
    try:
        return int(external_user_id)
    except ValueError:
        return external_user_id
