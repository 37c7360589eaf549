"""Answering a tap on the 👍/👎 buttons (a callback query): Telegram's app shows a spinner on
the button until the bot calls ``answerCallbackQuery``
(core.telegram.org/bots/api#answercallbackquery).

Two ways, one per way updates arrive:
- a webhook may answer with one Bot API call in the body of its HTTP response ("Making requests
  when getting updates", core.telegram.org/bots/api#making-requests-when-getting-updates): no
  request of our own, nothing for the webhook to wait on (``webhook_answer``);
- long polling calls ``answerCallbackQuery`` and then ``editMessageReplyMarkup``, which shows
  the choice on the keyboard (``acknowledge_vote``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.payloads import is_json_int
from adapters.telegram.client import BotApiClient
from bot.core.messages import InboundMessage
from bot.core.votes import NOT_TAKEN, THANKS, THUMBS, read_vote_payload

CHOSEN = " ✓"  # after the thumb the student chose, on the edited keyboard


def thanks(message: InboundMessage, recorded: bool) -> str:
    """The few words Telegram shows once the vote is taken (or refused), in the language of
    the answer voted on; the same toast for a vote cast again, which adds nothing to the chat."""
    vote = message.vote
    if vote is None:
        return NOT_TAKEN["vi"]
    if not recorded:
        return NOT_TAKEN[vote.language]
    return f"{THANKS[vote.language]} {THUMBS[vote.value]}"


def webhook_answer(message: InboundMessage, recorded: bool) -> dict[str, Any] | None:
    """The ``answerCallbackQuery`` call a webhook's response may carry for this vote."""
    if message.vote is None or message.vote.ack_id is None:
        return None
    return {
        "method": "answerCallbackQuery",
        "callback_query_id": message.vote.ack_id,
        "text": thanks(message, recorded),
    }


def chosen_keyboard(
    raw: Mapping[str, Any], answer_id: int, value: int
) -> InlineKeyboardMarkup | None:
    """The keyboard of the message the vote was cast on, with the chosen thumb marked; None
    when the update does not carry it (an old message, an inline one)."""
    query = raw.get("callback_query")
    message = query.get("message") if isinstance(query, dict) else None
    markup = message.get("reply_markup") if isinstance(message, dict) else None
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    if not isinstance(rows, list):
        return None
    out: list[list[InlineKeyboardButton]] = []
    for row in rows:
        if not isinstance(row, list):
            return None
        buttons = []
        for button in row:
            if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                return None
            data, url = button.get("callback_data"), button.get("url")
            if isinstance(data, str):
                found = read_vote_payload(data)
                text = button["text"]
                if found is not None and found[0] == answer_id:
                    text = THUMBS[found[1]] + (CHOSEN if found[1] == value else "")
                buttons.append(InlineKeyboardButton(text, callback_data=data))
            elif isinstance(url, str):
                buttons.append(InlineKeyboardButton(button["text"], url=url))
            else:
                return None  # a kind of button we never send: leave the keyboard alone
        out.append(buttons)
    return InlineKeyboardMarkup(out)


async def acknowledge_vote(client: BotApiClient, message: InboundMessage, recorded: bool) -> None:
    """Answer the callback query; then, for a vote taken, mark the choice on the keyboard.
    ``SendError`` if a call fails (the caller logs it: the vote is stored either way)."""
    vote = message.vote
    if vote is None or vote.ack_id is None:
        return
    await client.call(
        "answerCallbackQuery",
        client.bot.answer_callback_query(vote.ack_id, text=thanks(message, recorded)),
    )
    if not recorded:
        return
    keyboard = chosen_keyboard(message.raw, vote.answer_id, vote.value)
    query = message.raw.get("callback_query")
    sent = query.get("message") if isinstance(query, dict) else None
    message_id = sent.get("message_id") if isinstance(sent, dict) else None
    if keyboard is None or not is_json_int(message_id):
        return
    await client.call(
        "editMessageReplyMarkup",
        client.bot.edit_message_reply_markup(
            chat_id=int(message.external_user_id), message_id=message_id, reply_markup=keyboard
        ),
    )
